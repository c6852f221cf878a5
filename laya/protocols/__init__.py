"""Training protocols: how a backbone entry's backbone is trained before its heads read its cache.

`frozen` (the default): backbone with a linear classifier, frozen; heads trained on its cache.
`joint`: the LAYA paper's — backbone and LAYA head trained end to end as one model per seed (joint.py, create.py).
`transfer`: backbone pretrained on some classes, frozen; heads trained on the other classes (transfer.py).
This package's root holds what every stage needs (units, class subsets); training lives in joint.py/create.py.
"""

from laya.protocols.transfer import ClassSubset, backbone_data, head_data, transfer_classes
from laya.protocols.units import Unit, units

__all__ = ["ClassSubset", "Unit", "backbone_data", "head_data", "transfer_classes", "units"]
