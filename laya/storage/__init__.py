"""Where activations live: the feature store (store, store_info), its shards (shards, shard_files, zarrio), reading
it window by window (prefetch), its statistics, and locations on a local disk or an object store (location)."""
