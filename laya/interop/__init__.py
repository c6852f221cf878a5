"""Feature stores to and from the cache layouts of other tools, chunk-wise and round-trip exact.

    HDF5 (h5py): one file, one dataset per store array at the same path (`train/layers/blocks.0`, `train/labels`,
                 …), the store's card as the JSON root attribute `laya` — `export_hdf5`, `import_hdf5`.
    memmap:      a folder of raw C-order `.bin` files, one per array, described by `metadata.json` (dtype, shape
                 and file of every array, plus the card) — the layout saev reads with `np.memmap` —
                 `export_memmap`, `import_memmap`.

A file written by another tool imports when its arrays follow those paths; without a `laya` card, give the layer
order and class names (`import_hdf5(..., layers=[...], classes=[...])`). The command line: pipeline/convert.py.
"""

from laya.interop.hdf5 import export_hdf5, import_hdf5
from laya.interop.memmap import export_memmap, import_memmap

__all__ = ["export_hdf5", "export_memmap", "import_hdf5", "import_memmap"]
