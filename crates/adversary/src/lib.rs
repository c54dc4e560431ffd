#![doc = include_str!("../README.md")]

pub mod attack;
pub mod budget;
pub mod contaminate;
pub mod eval;
pub mod exact_deletion;
pub mod noise;
pub mod sample;

pub use attack::{
    Attack, AttackKind, AttackOutcome, BudgetedAttack, CorruptionStats, ExactDelete, GreedyCorrupt,
    GreedyDelete, RandomDelete,
};
pub use budget::AttackBudget;
pub use contaminate::{
    AimedOutliers, LabelNoise, LabelNoiseMode, MaliciousAdversary, MaliciousNoise,
    NormMatchedOutliers, RolrOutliers, orthogonal_directions,
};
pub use eval::{
    Certificate, CertifyOptions, CurvePoint, DecidedBy, EvalReport, ExampleCertificate, NoiseKind,
    NoisePoint, Verdict, attacked_dataset, attacked_dataset_model, certify, certify_curve,
    certify_with, error_vs_budget, error_vs_noise, error_vs_noise_linear, evaluate,
    evaluate_attack, evaluate_model,
};
pub use exact_deletion::{DEFAULT_NODE_LIMIT, Deletion, ExactDeletion, ExactMethod, Item};
pub use noise::{CloudDirection, GaussianCloud, UniformNoise};
pub use sample::{
    Distribution, halfspace_data, monte_carlo_error, random_unit_vector, rotation_invariant_error,
    standard_normal,
};
