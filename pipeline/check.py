"""Stage `check`: validate the whole params.yaml (every section, unknown sections, cross-references).

    python pipeline/check.py --params params.yaml --out data/params.ok

Depends on the whole params file, so any edit reruns it (in about a second), and a typo anywhere — even in a
section no stage reads — fails `dvc repro` with one line naming the key, instead of "up to date". Every other
stage depends on --out, so DVC runs this first and a bad value fails before DVC deletes any stage's previous
outputs. --out's content never varies (a valid params.yaml gives the same bytes), so passing the check does not
by itself rerun anything downstream.
"""

from laya.check import check_params
from laya.core.cli import parser, run
from laya.core.io import atomic_path
from laya.core.params import load_params

STAMP = ("params.yaml passed `check`; the other stages depend on this file so that a bad params.yaml stops "
         "before DVC deletes their outputs\n")


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--out", default=None, help="stamp file to write when the params are valid")
    args = p.parse_args()
    checked = check_params(load_params(args.params), args.params)
    if args.out:
        with atomic_path(args.out) as tmp:
            tmp.write_text(STAMP)
    print(f"check: {args.params} is valid ({len(checked)} sections)")


if __name__ == "__main__":
    run(main)
