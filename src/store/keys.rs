//! The key layout inside a backend, in one place, so that recovery, the
//! computed sweep and the repair agree on every name and range.

/// The head record: the commit point of a snapshot.
pub(super) fn head_key(prefix: &str) -> String {
    format!("{prefix}head")
}

/// The encryption header of a sealed store (see `sealed`): plaintext.
pub(super) fn crypt_key(prefix: &str) -> String {
    format!("{prefix}crypt")
}

/// One op-log record. Fixed-width hex, so key order is sequence order.
pub(super) fn log_key(prefix: &str, seq: u64) -> String {
    format!("{prefix}log/{seq:016x}")
}

/// Every log record starts with this.
pub(super) fn log_prefix(prefix: &str) -> String {
    format!("{prefix}log/")
}

/// Every snapshot chunk starts with this.
pub(super) fn snap_prefix(prefix: &str) -> String {
    format!("{prefix}snap/")
}

/// Every chunk of generation `gen` starts with this. Fixed-width hex, so
/// older generations sort before newer ones.
pub(super) fn gen_prefix(prefix: &str, gen: u64) -> String {
    format!("{prefix}snap/{gen:016x}/")
}

/// Chunk `index` of generation `gen`.
pub(super) fn chunk_key(prefix: &str, gen: u64, index: u32) -> String {
    format!("{prefix}snap/{gen:016x}/{index:08x}")
}

/// The sequence number of a log key, or `None` if `key` is not one.
pub(super) fn parse_seq(prefix: &str, key: &str) -> Option<u64> {
    let hex = key.strip_prefix(prefix)?.strip_prefix("log/")?;
    if hex.len() != 16 {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

/// The smallest key that sorts after `key`: ranges have an inclusive start,
/// and this turns "after the last key seen" into one.
pub(super) fn successor(key: &str) -> String {
    format!("{key}\0")
}
