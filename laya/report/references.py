"""Numbers the papers report, shown beside ours as references (never as pass/fail targets); kept here only."""

# LAYA (arXiv 2511.12723), its reference MLP trained jointly with LAYA on Fashion-MNIST
LAYA_PAPER_JOINT_MLP = {"accuracy": 0.8842, "faithfulness": 0.8575}
