//! Layer discovery and bounded rule-file reading. (being written)
