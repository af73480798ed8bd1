//! Settings: schema, settings files, resolution and the cache. (being written)
