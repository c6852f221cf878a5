"""Stage `check`: validate the whole params.yaml (every section, unknown sections, cross-references).

    python pipeline/check.py --params params.yaml

Depends on the whole params file, so any edit reruns it (in about a second) and a typo anywhere — even in a
section no stage reads — fails `dvc repro` with one line naming the key, instead of "up to date".
"""

from laya.check import check_params
from laya.cli import parser, run
from laya.config import load_params


def main() -> None:
    args = parser(__doc__).parse_args()
    checked = check_params(load_params(args.params), args.params)
    print(f"check: {args.params} is valid ({len(checked)} sections)")


if __name__ == "__main__":
    run(main)
