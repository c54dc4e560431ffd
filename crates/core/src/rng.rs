//! Seeded randomness: every random choice in Bulwark draws from a ChaCha8 stream built from a
//! `u64` seed, so the same seed gives the same bits on every platform.

use rand::SeedableRng;

/// The random number generator used throughout Bulwark.
pub type Rng = rand_chacha::ChaCha8Rng;

/// A generator from a seed.
pub fn rng_from_seed(seed: u64) -> Rng {
    Rng::seed_from_u64(seed)
}

/// An independent generator for sub-task `stream` of a seeded run (e.g. split `k`, repetition
/// `r`): the ChaCha stream id separates them without correlating the sequences.
pub fn rng_for_stream(seed: u64, stream: u64) -> Rng {
    let mut rng = Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}
