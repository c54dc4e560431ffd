//! Raw command-line definitions (clap derive). Values are parsed and range-checked here;
//! building configuration objects happens in the command modules.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Robust linear classification under feature deletion, corruption and contamination.
#[derive(Debug, Parser)]
#[command(name = "bulwark", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// Data directory holding the non-embedded data sets (default: $BULWARK_DATA, else the
    /// repository's data/ folder).
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// No progress bars and no warnings on stderr (errors are still reported).
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// Worker threads of the solvers (default: every core, or $RAYON_NUM_THREADS). Results do
    /// not depend on it.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Inspect data sets.
    #[command(subcommand)]
    Data(DataCommand),
    /// Solve linear programs.
    #[command(subcommand)]
    Lp(LpCommand),
    /// Train a classifier and write the model file (.json text or .bin binary).
    #[command(
        after_help = "Examples:\n  bulwark train --algo lp --data wdbc --scale minmax --budget 5 --C 1 --values mi --out wdbc.json\n  bulwark train --algo lp --data mnist10k --pair 3,8 --scale minmax --budget 50 --values mi --out m38.bin --json"
    )]
    Train(TrainArgs),
    /// Choose a learner's parameters by stratified, seeded K-fold cross-validation under a
    /// threat, refit on all the data and write the model file (with the CV table).
    #[command(
        after_help = "Threats: none, missing (validation records lose the cells of a pattern drawn from the data's records with missing cells, or from --missing-from), greedy-delete:N, random-delete:N, greedy-corrupt:N (N features, on top of the cells missing), uniform-noise:X, missing+ATTACK, or a contamination of the training folds: label-random:R, label-far:R, label-near:R, label-halfspace:R, flipped-labels:R, random-points:R, coordinated-pull:R.\n\nExamples:\n  bulwark tune --algo lp --data pima2 --missing delete --scale standard --threat missing --folds 5 --out pima.json\n  bulwark tune --algo lp --data wdbc --scale standard --grid C=0.1,1,10 --grid budget=0,2,4 --threat greedy-delete:3 --json --out lp.json\n  bulwark tune --algo svm --data pima2 --missing drop --scale standard --threat greedy-delete:2 --seed 3 --out svm.bin"
    )]
    Tune(TuneArgs),
    /// Predict labels and scores with a trained model (CSV, or JSON with --json).
    #[command(
        after_help = "Examples:\n  bulwark predict --model wdbc.json --data wdbc --out predictions.csv\n  bulwark predict --model wdbc.bin --data new.csv --json"
    )]
    Predict(PredictArgs),
    /// Error of a model on (attacked) test data.
    #[command(
        after_help = "Examples:\n  bulwark eval --model wdbc.json --data wdbc --attack greedy-delete --budget 5 --json\n  bulwark eval --model wdbc.json --data wdbc --attack greedy-delete --budgets 0,2,4,6 --json > curve.json\n  bulwark eval --model m.json --data test.csv --attack greedy-corrupt --budget 3 --seed 7"
    )]
    Eval(EvalArgs),
    /// Certified robust error of a linear model under worst-case feature deletion.
    #[command(
        after_help = "Example:\n  bulwark certify --model wdbc.json --data wdbc --budget 5 --json"
    )]
    Certify(CertifyArgs),
    /// Write the attacked copy of a data set (CSV, in the data's original units).
    #[command(
        after_help = "Example:\n  bulwark attack --model wdbc.json --data wdbc --attack greedy-delete --budget 5 --out attacked.csv.gz"
    )]
    Attack(AttackArgs),
    /// Plot error-versus-budget curves from `bulwark eval --json` output, or the
    /// cross-validation error against a tuned parameter from `bulwark tune --json` (SVG).
    #[command(
        after_help = "Examples:\n  bulwark eval --model lp.json --data wdbc --attack greedy-delete --budgets 0,2,4,6 --json > lp.eval.json\n  bulwark plot lp.eval.json svm.eval.json --out curves.svg --title \"wdbc, greedy deletion\"\n  bulwark tune --algo lp --data wdbc --scale standard --threat greedy-delete:3 --out lp.json --json > lp.tune.json\n  bulwark plot lp.tune.json --param budget --out cv.svg"
    )]
    Plot(PlotArgs),
    /// Inspect or convert model files.
    #[command(subcommand)]
    Model(ModelCommand),
    /// A short end-to-end demonstration on the embedded wdbc data (no data directory needed).
    #[command(after_help = "Example:\n  bulwark demo --budget 5 --C 1 --seed 1")]
    Demo(DemoArgs),
}

/// `bulwark data …`
#[derive(Debug, Subcommand)]
pub enum DataCommand {
    /// Shape, classes and sparsity of a data set (a built-in name or a file).
    #[command(
        after_help = "Examples:\n  bulwark data info wdbc --json\n  bulwark data info mnist10k --data-dir /other/data\n  bulwark data info my.libsvm"
    )]
    Info(DataInfoArgs),
    /// Draw a labelled sample of a halfspace (Klivans-Long-Servedio's distributions) and
    /// contaminate it with malicious or label noise (CSV).
    #[command(
        after_help = "Examples:\n  bulwark data sample --dist ball --dim 50 --examples 10000 --eta 0.1 --noise coordinated-pull --seed 1 --out train.csv\n  bulwark data sample --dist centered-exponential --dim 10 --examples 4000 --eta 0.05 --noise label-halfspace --out t.csv.gz --json"
    )]
    Sample(DataSampleArgs),
}

/// `bulwark data sample`
#[derive(Debug, Args)]
pub struct DataSampleArgs {
    /// The distribution of the points: ball (uniform on the unit ball), gaussian, cube,
    /// laplace, isotropic-ball or centered-exponential (the isotropic log-concave laws).
    #[arg(long, default_value = "ball")]
    pub dist: String,
    /// The dimension n (at least 2).
    #[arg(long)]
    pub dim: usize,
    /// The number of examples m (at least 1).
    #[arg(long)]
    pub examples: usize,
    /// The noise rate eta, in [0, 1).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub eta: f64,
    /// The contamination: coordinated-pull, evasive-pull, flipped-labels, random-points
    /// (malicious noise: each example replaced with probability eta), or label-random,
    /// label-far, label-near, label-halfspace (label noise on fixed points).
    #[arg(long, default_value = "coordinated-pull")]
    pub noise: String,
    /// evasive-pull: the removal threshold on (z.x)^2 the dirty points stay just below
    /// (default: A_mu's 10 ln m / n).
    #[arg(long, allow_negative_numbers = true)]
    pub evasive_threshold: Option<f64>,
    /// evasive-pull: the number of orthogonal directions the dirty points are spread over.
    #[arg(long, default_value_t = 1)]
    pub directions: usize,
    /// Seed of the target direction, the sample and the noise.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The CSV file to write (`label` column first; `.gz` compresses).
    #[arg(long)]
    pub out: PathBuf,
    /// Print a JSON object (the target u, counts) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `bulwark model …`
#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Format, algorithm, hyper-parameters and training metadata of a model file.
    #[command(
        after_help = "Examples:\n  bulwark model info wdbc.json\n  bulwark model info wdbc.bin --json"
    )]
    Info(ModelInfoArgs),
    /// Rewrite a model file in the encoding named by the output extension (.json or .bin).
    #[command(after_help = "Example:\n  bulwark model convert wdbc.json --out wdbc.bin")]
    Convert(ModelConvertArgs),
}

/// `bulwark model info`
#[derive(Debug, Args)]
pub struct ModelInfoArgs {
    /// The model file (.json or .bin).
    pub model: PathBuf,
    /// Print a JSON object (the whole model file) instead of a summary.
    #[arg(long)]
    pub json: bool,
}

/// `bulwark model convert`
#[derive(Debug, Args)]
pub struct ModelConvertArgs {
    /// The model file to read (.json or .bin).
    pub input: PathBuf,
    /// The file to write: `.json` (text) or `.bin` (binary).
    #[arg(long)]
    pub out: PathBuf,
    /// Print a JSON object (sizes) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// How data files are read (every command that loads data takes these).
#[derive(Debug, Clone, Default, Args)]
pub struct ReadArgs {
    /// File format: csv, libsvm or idx (default: from the file name, else from the content).
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// A CSV cell read as missing (repeatable), besides the empty cell, NA, NaN and ?. A missing
    /// feature is a deleted one: 0 in the model's input space, counted against the budget.
    #[arg(long = "missing-token", value_name = "TOKEN")]
    pub missing_tokens: Vec<String>,
    /// The longest line (after decompression) a CSV or LIBSVM file may have, in bytes or with a
    /// K, M or G suffix; a longer one is an error naming the line.
    #[arg(long, value_name = "BYTES", default_value = "64M")]
    pub max_line: String,
}

/// `bulwark data info`
#[derive(Debug, Args)]
pub struct DataInfoArgs {
    /// Built-in name (wdbc, spambase, ionosphere, pima, splice, wine, housevotes84, breastcancer,
    /// pima2, usps, mnist10k, spamassassin) or a path.
    pub data: String,
    /// How the file is read.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `bulwark demo`
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Deletion budget N the robust learners train for (total MI value of deleted features).
    #[arg(long, default_value_t = 5.0, allow_negative_numbers = true)]
    pub budget: f64,
    /// Box radius C of LP/O2B, and the SVM's C.
    #[arg(long = "C", default_value_t = 1.0, allow_negative_numbers = true)]
    pub c: f64,
    /// Seed of the train/test split.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `bulwark lp …`
#[derive(Debug, Subcommand)]
pub enum LpCommand {
    /// Solve an LP in free MPS format with the interior-point engine.
    #[command(
        after_help = "Examples:\n  bulwark lp solve afiro.mps\n  bulwark lp solve greenbea.mps --json --time-limit 600"
    )]
    Solve(LpSolveArgs),
}

/// `bulwark lp solve`
#[derive(Debug, Args)]
pub struct LpSolveArgs {
    /// The MPS file (free format; .mps or .mps.gz).
    pub file: PathBuf,
    /// Print a JSON object (status, objective, iterations, seconds, residuals, gap).
    #[arg(long)]
    pub json: bool,
    /// Print the iteration log to stderr.
    #[arg(long)]
    pub verbose: bool,
    /// Relative feasibility and gap tolerance.
    #[arg(long, default_value_t = 1e-8, value_parser = positive_f64, allow_negative_numbers = true)]
    pub tolerance: f64,
    /// Iteration limit.
    #[arg(long, default_value_t = 200)]
    pub max_iter: u32,
    /// Wall-clock limit in seconds.
    #[arg(long, value_parser = positive_f64, allow_negative_numbers = true)]
    pub time_limit: Option<f64>,
}

/// Feature scaling fitted on the training data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScaleArg {
    /// Affine map of each feature's training range onto [-1, 1] (max-abs for sparse data).
    Minmax,
    /// Zero mean, unit variance (dense data).
    Standard,
}

/// `bulwark train`
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Learning algorithm (a learner of the registry; the list is below).
    #[arg(long, value_parser = crate::learner_args::algo_names())]
    pub algo: String,
    /// Training data: a built-in name or a file.
    #[arg(long)]
    pub data: String,
    /// Binary task from two classes A,B (A becomes +1).
    #[arg(long, value_name = "A,B", conflicts_with = "positive")]
    pub pair: Option<String>,
    /// Binary task: this class is +1, all others -1.
    #[arg(long, value_name = "CLASS")]
    pub positive: Option<String>,
    /// Scale features (fitted on the training data and stored in the model file). Without it
    /// the data are used exactly as given.
    #[arg(long, value_enum)]
    pub scale: Option<ScaleArg>,
    /// Output model file: `.json` (text) or `.bin` (compact binary).
    #[arg(long)]
    pub out: PathBuf,
    /// Records with a missing cell: error (refuse them), drop (leave them out) or delete (train
    /// on them with the missing features deleted, which the DSX LP and O2B model exactly).
    #[arg(long, value_name = "POLICY", default_value = "error")]
    pub missing: String,
    /// How the training file is read.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Print a JSON object (solver, converged, objective, iterations, seconds, …).
    #[arg(long)]
    pub json: bool,
    /// The learner's hyper-parameters (each learner takes the ones listed with its name).
    #[command(flatten)]
    pub params: crate::learner_args::LearnerArgs,
}

/// `bulwark tune`
#[derive(Debug, Args)]
pub struct TuneArgs {
    /// Learning algorithm (a learner of the registry).
    #[arg(long, value_parser = crate::learner_args::algo_names())]
    pub algo: String,
    /// Data: a built-in name or a file.
    #[arg(long)]
    pub data: String,
    /// Binary task from two classes A,B (A becomes +1).
    #[arg(long, value_name = "A,B", conflicts_with = "positive")]
    pub pair: Option<String>,
    /// Binary task: this class is +1, all others -1.
    #[arg(long, value_name = "CLASS")]
    pub positive: Option<String>,
    /// Scale features (fitted on each training fold; for the model, on all the data).
    #[arg(long, value_enum)]
    pub scale: Option<ScaleArg>,
    /// A parameter's grid (repeatable): `--grid C=0.1,1,10`. The learner's tunable parameters
    /// not given here (nor fixed by their own flag) are searched over its default grid.
    #[arg(long, value_name = "PARAM=V1,V2,...")]
    pub grid: Vec<String>,
    /// What every fold's model is scored under (below).
    #[arg(long, default_value = "none")]
    pub threat: String,
    /// Stratified folds (at least 2, at most the examples of the smallest class).
    #[arg(long, default_value_t = 5)]
    pub folds: usize,
    /// Seed of the folds, of every random choice of the threat and of the learner (for a
    /// learner that takes one).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The records whose missing cells the threat `missing` draws from and the values
    /// `missingness` count (which cells, not their values or labels), when not those of
    /// --data: e.g. the records to be classified.
    #[arg(long, value_name = "DATA")]
    pub missing_from: Option<String>,
    /// Output model file: `.json` (text) or `.bin` (compact binary).
    #[arg(long)]
    pub out: PathBuf,
    /// Records with a missing cell: error (refuse them), drop (leave them out) or delete (keep
    /// them with the missing features deleted).
    #[arg(long, value_name = "POLICY", default_value = "error")]
    pub missing: String,
    /// How the data file is read.
    #[command(flatten)]
    pub read: ReadArgs,
    /// Print a JSON object (best, cv, threat, …) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Parameters fixed for every fit (each learner takes the ones listed with its name).
    #[command(flatten)]
    pub params: crate::learner_args::TuneLearnerArgs,
}

fn positive_f64(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(format!("`{s}` must be a finite number > 0"))
    }
}

/// Data and task shared by the evaluation commands.
#[derive(Debug, Args)]
pub struct EvalData {
    /// Model file written by `bulwark train` (.json or .bin).
    #[arg(long)]
    pub model: PathBuf,
    /// Test data: a built-in name or a file (scaled with the model's scaler, if it has one).
    #[arg(long)]
    pub data: String,
    /// Binary task from two classes A,B, A = +1 (default: the model's training task).
    #[arg(long, value_name = "A,B", conflicts_with = "positive")]
    pub pair: Option<String>,
    /// Binary task: this class is +1, all others -1 (default: the model's training task).
    #[arg(long, value_name = "CLASS")]
    pub positive: Option<String>,
    /// Feature values of the adversary's budget: `model` (those the model was trained with,
    /// else uniform), uniform, mi (computed on these data), missingness (the surprise of each
    /// feature's missing rate in these data) or a file with one value per line.
    #[arg(long, default_value = "model")]
    pub values: String,
    /// How the data file is read (missing cells are deleted features, counted against the budget).
    #[command(flatten)]
    pub read: ReadArgs,
    /// Print a JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Test-time attacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AttackArg {
    /// No attack.
    None,
    /// DSX §4 greedy deletion.
    GreedyDelete,
    /// DSX §4 greedy corruption (Gaussian noise with the training moments).
    GreedyCorrupt,
    /// Delete N random non-zero features (Globerson–Roweis protocol).
    RandomDelete,
    /// Exact worst-case deletion (0/1 knapsack per example).
    ExactDelete,
    /// Ginodi Figs. 2.5/2.7: i.i.d. U(-a, a) noise on every feature (in the model's input
    /// units, after its scaling); the budget is a.
    UniformNoise,
}

/// `bulwark eval`
#[derive(Debug, Args)]
pub struct EvalArgs {
    #[command(flatten)]
    pub common: EvalData,
    /// The attack.
    #[arg(long, value_enum, default_value = "none")]
    pub attack: AttackArg,
    /// Adversary budget N (total value of deleted/corrupted features per example; the
    /// half-width a for uniform-noise).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub budget: f64,
    /// Several budgets, comma-separated: an error-versus-budget curve (input of `bulwark plot`).
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 1..,
        allow_negative_numbers = true,
        conflicts_with = "budget",
        value_name = "N1,N2,..."
    )]
    pub budgets: Option<Vec<f64>>,
    /// Seed of randomised attacks.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// `bulwark predict`
#[derive(Debug, Args)]
pub struct PredictArgs {
    /// Model file written by `bulwark train` (.json or .bin).
    #[arg(long)]
    pub model: PathBuf,
    /// Data: a built-in name or a file (scaled with the model's scaler, if it has one).
    #[arg(long)]
    pub data: String,
    /// Binary task from two classes A,B, A = +1 (default: the model's training task).
    #[arg(long, value_name = "A,B", conflicts_with = "positive")]
    pub pair: Option<String>,
    /// Binary task: this class is +1, all others -1 (default: the model's training task).
    #[arg(long, value_name = "CLASS")]
    pub positive: Option<String>,
    /// Write the predictions here (CSV: index,score,prediction,label) instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// How the data file is read (missing cells are deleted features).
    #[command(flatten)]
    pub read: ReadArgs,
    /// Print a JSON object (error and one record per example) instead of CSV.
    #[arg(long)]
    pub json: bool,
}

/// `bulwark plot`
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// One or more files written by `bulwark eval --json` (one curve each).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output SVG file.
    #[arg(long)]
    pub out: PathBuf,
    /// Plot title.
    #[arg(long, default_value = "Error under attack")]
    pub title: String,
    /// Logarithmic budget axis (budgets must be > 0).
    #[arg(long)]
    pub log_x: bool,
    /// `tune` output: the tuned parameter on the x-axis (default: the first numeric one).
    #[arg(long)]
    pub param: Option<String>,
    /// Print a JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `bulwark certify`
#[derive(Debug, Args)]
pub struct CertifyArgs {
    #[command(flatten)]
    pub common: EvalData,
    /// Adversary budget N.
    #[arg(long, allow_negative_numbers = true)]
    pub budget: f64,
    /// Branch-and-bound node limit per example (undecided examples widen the interval).
    #[arg(long, default_value_t = 1_000_000)]
    pub node_limit: u64,
    /// Include one record per example in the JSON output.
    #[arg(long)]
    pub per_example: bool,
}

/// `bulwark attack`
#[derive(Debug, Args)]
pub struct AttackArgs {
    #[command(flatten)]
    pub common: EvalData,
    /// The attack.
    #[arg(long, value_enum)]
    pub attack: AttackArg,
    /// Adversary budget N.
    #[arg(long, allow_negative_numbers = true)]
    pub budget: f64,
    /// Seed of randomised attacks.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output CSV file (`.csv` or `.csv.gz`), header `label,<features>`; written atomically.
    #[arg(long)]
    pub out: PathBuf,
}
