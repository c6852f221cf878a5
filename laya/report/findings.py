"""What you can trust α for: a few sentences derived from the numbers of this run, never written by hand.

They lead reports/index.html, docs/results/index.md and the README's findings block (between FINDINGS_START and
FINDINGS_END), so every number a reader meets first is the run's own. A finding whose stages have not run is left
out."""

from __future__ import annotations

from laya.report.document import Block, Heading
from laya.report.inputs import ReportInputs

FINDINGS_START = "<!-- findings: written by `dvc repro report` (laya.report.findings); do not edit -->"
FINDINGS_END = "<!-- /findings -->"
HEAD, LAST = "laya", "last"
TRUSTED_RHO = 0.9  # a sanity ρ at or above this: the attribution did not change


def findings(inputs: ReportInputs) -> list[str]:
    """Markdown sentences, one per question: accuracy, ranking layers, evidence for a class, telling errors."""
    found = [_accuracy(inputs), _ranking(inputs), _relevance(inputs), _probes(inputs), _class_evidence(inputs),
             _errors(inputs)]
    return [line for line in found if line]


def _span(values: dict[str, float], digits: int = 3) -> str:
    low, high = min(values.values()), max(values.values())
    return f"{low:.{digits}f}" if round(low, digits) == round(high, digits) else f"{low:.{digits}f}–{high:.{digits}f}"


def _accuracy(inputs: ReportInputs) -> str:
    """LAYA against LastLayer where both converged (a head stopped at its epoch cap is left out, and named)."""
    gains, capped = {}, []
    for name in inputs.backbones:
        record = inputs.train(name)
        if HEAD in record.accuracy and LAST in record.accuracy:
            if HEAD in record.capped or LAST in record.capped:
                capped.append(name)
            else:
                gains[name] = 100 * (record.accuracy[HEAD].mean - record.accuracy[LAST].mean)
    left_out = (f" Left out, a head stopped at its epoch cap before converging: {', '.join(f'`{n}`' for n in capped)}."
                if capped else "")
    if not gains:
        return f"**Accuracy.**{left_out}" if capped else ""
    best = max(gains, key=gains.get)
    return (f"**Accuracy.** Mixing every layer with α (LAYA) against the last layer alone (LastLayer), both trained "
            f"until early stopping ended them: {_signed(gains)} percentage points of test accuracy; the largest gain "
            f"is on `{best}` ({gains[best]:+.2f} pp).{left_out}")


def _signed(gains: dict[str, float]) -> str:
    return ", ".join(f"`{name}` {gain:+.2f}" for name, gain in gains.items())


def _ranking(inputs: ReportInputs) -> str:
    alpha, ig = {}, {}
    for name in inputs.backbones:
        e = inputs.evaluate(name)
        a, g = (e.score("faithfulness", HEAD, m) if e else None for m in ("intrinsic", "ig"))
        if a is not None and g is not None:
            alpha[name], ig[name] = a.mean, g.mean
    if not alpha:
        return ""
    behind = [n for n in alpha if alpha[n] < ig[n]]
    verdict = (f"α ranks layers less faithfully than Integrated Gradients on {len(behind)} of {len(alpha)} "
               f"backbones" if behind else f"α ranks layers at least as faithfully as Integrated Gradients on all "
                                           f"{len(alpha)} backbones")
    return (f"**Ranking layers.** {verdict}: faithfulness (Spearman with the leave-one-layer-out effects; 1 = "
            f"the effects' own order, 0 = random) of α {_span(alpha)}, of IG {_span(ig)}. Use α as a cheap first "
            f"look at which layers a prediction leans on; confirm with IG or the ablation itself.")


def _relevance(inputs: ReportInputs) -> str:
    """LRP relative to the ablation value against α and IG, where all three were scored on the LAYA head."""
    found: dict[str, dict[str, float]] = {"lrp_delta": {}, "intrinsic": {}, "ig": {}}
    for name in inputs.backbones:
        e = inputs.evaluate(name)
        scores = {m: e.score("faithfulness", HEAD, m) if e else None for m in found}
        if all(s is not None for s in scores.values()):
            for method, score in scores.items():
                found[method][name] = score.mean
    lrp, alpha, ig = found["lrp_delta"], found["intrinsic"], found["ig"]
    if not lrp:
        return ""
    ahead = [n for n in lrp if lrp[n] > alpha[n]]
    reaches = [n for n in lrp if lrp[n] >= ig[n]]
    return (f"**Relevance that reads the classifier.** LRP relative to the ablation value (`lrp_delta`: each layer's "
            f"term of the explained logit over its ablation value, one head pass like α) ranks layers more "
            f"faithfully than α on {len(ahead)} of {len(lrp)} backbones and reaches IG on {len(reaches)}: "
            f"{_span(lrp)} against α {_span(alpha)} and IG {_span(ig)}.")


AGREES = 0.7  # a mean Spearman with the probes at or above this: α mostly repeats what the probes say


def _probes(inputs: ReportInputs) -> str:
    """α against the per-layer probes on the LAYA head: their agreement, and which ranks layers more faithfully."""
    agreement, probe, alpha = {}, {}, {}
    for name in inputs.backbones:
        e = inputs.evaluate(name)
        rho = (e.probe_agreement or {}).get(HEAD, {}).get("intrinsic") if e else None
        p, a = (e.score("faithfulness", HEAD, m) if e else None for m in ("probe", "intrinsic"))
        if rho is not None and p is not None and a is not None:
            agreement[name], probe[name], alpha[name] = rho, p.mean, a.mean
    if not agreement:
        return ""
    close = [n for n, rho in agreement.items() if rho >= AGREES]
    verdict = (f"on {len(close)} of {len(agreement)} backbones α mostly repeats which layer alone can decode the "
               f"class" if close else "on every backbone α says more than which layer alone can decode the class")
    return (f"**More than a probe.** α against a linear probe per layer (p_c of each layer's own probe): mean "
            f"Spearman per input {_span(agreement)} — {verdict}. The probes' own ranking of layers has faithfulness "
            f"{_span(probe)} against α's {_span(alpha)}.")


def _class_evidence(inputs: ReportInputs) -> str:
    rho = {}
    for name in inputs.backbones:
        s = inputs.sanity(name)
        if s is not None and HEAD in s.heads and "intrinsic" in s.heads[HEAD].model_randomisation:
            rho[name] = s.heads[HEAD].model_randomisation["intrinsic"]["classifier"]
    if not rho:
        return ""
    unchanged = [n for n, value in rho.items() if value >= TRUSTED_RHO]
    if unchanged:
        return (f"**Evidence for a class.** With the classifier re-initialised, α stays the same on "
                f"{len(unchanged)} of {len(rho)} backbones (Spearman to the trained α {_span(rho)}): α says which "
                f"layers the head mixes, not which layers carry the evidence for the predicted class.")
    return (f"**Evidence for a class.** α changes when the classifier is re-initialised on every backbone "
            f"(Spearman to the trained α {_span(rho)}).")


def _errors(inputs: ReportInputs) -> str:
    alone, gain = {}, {}
    for name in inputs.backbones:
        e = inputs.evaluate(name)
        f = e.failure_detection if e else None
        if f is None or f.detector("alpha").auroc is None:
            continue
        alone[name] = f.detector("alpha").auroc
        both, msp = f.detector("msp_alpha").auroc, f.detector("msp").auroc
        if both is not None and msp is not None:
            gain[name] = both - msp
    if not alone:
        return ""
    added = (f"; added to the softmax confidence it changes the AUROC by {min(gain.values()):+.4f} to "
             f"{max(gain.values()):+.4f}" if gain else "")
    return (f"**Telling errors.** α alone tells wrong predictions from right ones with an AUROC of {_span(alone)} "
            f"(0.5 = chance){added}.")


def findings_blocks(inputs: ReportInputs) -> list[Block]:
    """The report's opening section (a heading, then one paragraph per finding)."""
    lines = findings(inputs)
    return [Heading(2, "What you can trust α for"), *lines] if lines else []


def findings_markdown(inputs: ReportInputs) -> str:
    """The findings as a Markdown list."""
    return "\n".join(f"- {line}" for line in findings(inputs)) + "\n"


def replace_findings(text: str, block: str, where: str) -> str:
    """`text` with the part between FINDINGS_START and FINDINGS_END replaced by `block`."""
    start, end = text.find(FINDINGS_START), text.find(FINDINGS_END)
    if start < 0 or end < start:
        raise ValueError(f"{where}: no findings block; add the lines {FINDINGS_START!r} and {FINDINGS_END!r} where "
                         f"the report should write its findings.")
    return text[:start + len(FINDINGS_START)] + "\n" + block + text[end:]
