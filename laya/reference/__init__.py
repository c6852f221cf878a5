"""What the documentation generates from the code: the params reference from the typed configs and dvc.yaml, the
metric keys from the report's headline, and the MkDocs hook that puts both in the site at build time."""
