"""Training protocols beside the default one (backbone frozen, heads trained on its cache).

`joint`: the LAYA paper's protocol — backbone and LAYA head trained end to end as one model (joint.py).
"""

from laya.protocols.joint import JointConfig, JointModel, fit_joint

__all__ = ["JointConfig", "JointModel", "fit_joint"]
