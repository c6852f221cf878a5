"""What every part of laya stands on: typed configs (config, params), atomic outputs (io), weights with their card
(artifacts), devices, a stage process's lifecycle and its workers (process, parallel, distributed), figures
(plots) and the stage scripts' arguments and one-line errors (cli)."""
