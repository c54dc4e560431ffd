//! O2B: Theorem 4 on random and adversarial streams, a naive reference implementation,
//! streaming = batch, reproducibility, separable data, bad input.

mod common;

use bulwark_core::{
    Classifier, Dataset, DeletionScratch, DenseMatrix, FeatureBudget, Fit, FitWith, LinearModel,
    RowView, Sign, rng_from_seed,
};
use bulwark_online::{FeatureValues, O2bOnline, O2bParams, theorem4_bound};
use proptest::prelude::*;
use rand::Rng as _;

fn mean_loss(budget: &FeatureBudget, model: &LinearModel, xs: &[Vec<f64>], ys: &[Sign]) -> f64 {
    let mut s = DeletionScratch::default();
    xs.iter()
        .zip(ys)
        .map(|(x, &y)| {
            budget
                .worst_case_deletion(model.weights(), model.bias(), RowView::Dense(x), y, &mut s)
                .loss
        })
        .sum::<f64>()
        / xs.len() as f64
}

/// The algorithm of notes A7/A8 written out naively (full copies of every hypothesis).
fn naive_o2b(
    budget: &FeatureBudget,
    c: f64,
    step: f64,
    xs: &[Vec<f64>],
    ys: &[Sign],
) -> (LinearModel, f64) {
    let n = budget.n_features();
    let (mut w, mut b) = (vec![0.0; n], 0.0);
    let mut hist: Vec<(Vec<f64>, f64)> = Vec::new();
    let mut s = DeletionScratch::default();
    let mut total = 0.0;
    for (x, &y) in xs.iter().zip(ys) {
        hist.push((w.clone(), b));
        let wc = budget.worst_case_deletion(&w, b, RowView::Dense(x), y, &mut s);
        total += wc.loss;
        if wc.loss > 0.0 {
            let mut keep = vec![1.0; n];
            for &(j, sig) in s.deleted() {
                keep[j] = 1.0 - sig;
            }
            for j in 0..n {
                w[j] = (w[j] + step * y.as_f64() * keep[j] * x[j]).clamp(-c, c);
            }
            b = (b + step * y.as_f64()).clamp(-c, c);
        }
    }
    let m = hist.len() as f64;
    let wbar = (0..n)
        .map(|j| hist.iter().map(|h| h.0[j]).sum::<f64>() / m)
        .collect();
    let bbar = hist.iter().map(|h| h.1).sum::<f64>() / m;
    (LinearModel::try_new(wbar, bbar).unwrap(), total / m)
}

#[derive(Debug, Clone)]
struct Stream {
    xs: Vec<Vec<f64>>,
    ys: Vec<Sign>,
    values: Vec<f64>,
    budget: f64,
    c: f64,
    adversarial: bool,
    seed: u64,
}

fn stream() -> impl Strategy<Value = Stream> {
    (
        1usize..=8,
        1usize..=80,
        any::<u64>(),
        0.05f64..5.0,
        any::<bool>(),
        any::<bool>(),
        0.0f64..0.95,
    )
        .prop_map(|(n, m, seed, c, uniform, adversarial, frac)| {
            let mut rng = rng_from_seed(seed);
            let values: Vec<f64> = (0..n)
                .map(|_| {
                    if uniform {
                        1.0
                    } else if rng.random_bool(0.2) {
                        0.0
                    } else {
                        rng.random_range(0.1..2.0)
                    }
                })
                .collect();
            let total: f64 = values.iter().sum();
            let budget = if total <= 0.0 {
                0.0
            } else if uniform {
                (frac * total).floor().min(total - 1.0).max(0.0)
            } else {
                frac * total
            };
            let xs: Vec<Vec<f64>> = (0..m)
                .map(|_| {
                    let mut x: Vec<f64> = (0..n)
                        .map(|_| {
                            if rng.random_bool(0.25) {
                                0.0
                            } else {
                                rng.random_range(-1.0..1.0)
                            }
                        })
                        .collect();
                    // ‖x‖₁ ≤ 1 (Theorem 4's assumption), sometimes exactly 1, sometimes smaller
                    let l1: f64 = x.iter().map(|v| v.abs()).sum();
                    let scale = if rng.random_bool(0.5) {
                        1.0
                    } else {
                        rng.random_range(0.0..1.0)
                    };
                    if l1 > 0.0 {
                        x.iter_mut().for_each(|v| *v *= scale / l1);
                    }
                    x
                })
                .collect();
            let ys = (0..m)
                .map(|_| {
                    if rng.random_bool(0.5) {
                        Sign::Pos
                    } else {
                        Sign::Neg
                    }
                })
                .collect();
            Stream {
                xs,
                ys,
                values,
                budget,
                c,
                adversarial,
                seed,
            }
        })
        .prop_filter("budget must leave P > 0", |s| {
            s.values.iter().sum::<f64>() > 0.0
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Theorem 4: online mean loss − mean loss of any comparator in the cube ≤ C√(2(n+1)/m),
    /// for random labels and for an adversary that labels every example against the learner.
    #[test]
    fn theorem4_regret_bound_holds(st in stream()) {
        let n = st.values.len();
        let m = st.xs.len();
        let budget = FeatureBudget::try_new(st.values.clone(), st.budget).unwrap();
        let mut online = O2bOnline::with_horizon(budget.clone(), st.c, m).unwrap();
        let mut ys = st.ys.clone();
        for (t, x) in st.xs.iter().enumerate() {
            if st.adversarial {
                // label against the current hypothesis' score (a score of 0 is labelled +1)
                let cur = online.current();
                let score = RowView::Dense(x).dot(cur.weights()) + cur.bias();
                ys[t] = if score > 0.0 { Sign::Neg } else { Sign::Pos };
            }
            online.observe(RowView::Dense(x), ys[t]).unwrap();
        }
        let online_avg = online.average_loss();
        let bound = theorem4_bound(st.c, n, m);
        let mut rng = rng_from_seed(st.seed ^ 0xABCD);
        let mut comparators = vec![LinearModel::zeros(n), online.averaged(), online.current()];
        for _ in 0..12 {
            comparators.push(LinearModel::try_new((0..n).map(|_| rng.random_range(-st.c..=st.c)).collect(), rng.random_range(-st.c..=st.c)).unwrap());
            comparators.push(LinearModel::try_new((0..n).map(|_| if rng.random_bool(0.5) { st.c } else { -st.c }).collect(), if rng.random_bool(0.5) { st.c } else { -st.c }).unwrap());
        }
        // a good comparator: many shuffled epochs of O2B on the same stream
        let data = Dataset::binary("s", DenseMatrix::from_rows(&st.xs).unwrap(), ys.clone()).unwrap();
        if data.require_two_classes().is_ok() {
            let fitted = O2bParams::new().c(st.c).budget(st.budget).values(FeatureValues::Given(st.values.clone()))
                .epochs(30).shuffle_seed(Some(st.seed)).fit(&data).unwrap();
            comparators.push(fitted.model);
        }
        let best = comparators.iter().map(|w| mean_loss(&budget, w, &st.xs, &ys)).fold(f64::INFINITY, f64::min);
        prop_assert!(online_avg - best <= bound + 1e-9,
            "online {online_avg} − best comparator {best} > bound {bound} (n {n}, m {m})");
        // every hypothesis stays in the cube
        let avg = online.averaged();
        prop_assert!(avg.max_abs_weight() <= st.c && avg.bias().abs() <= st.c);
    }

    /// The lazy O(n)-memory averaging equals the naive average of every stored hypothesis.
    #[test]
    fn matches_naive_reference(st in stream()) {
        let m = st.xs.len();
        let budget = FeatureBudget::try_new(st.values.clone(), st.budget).unwrap();
        let mut online = O2bOnline::with_horizon(budget.clone(), st.c, m).unwrap();
        for (x, &y) in st.xs.iter().zip(&st.ys) {
            online.observe(RowView::Dense(x), y).unwrap();
        }
        let (naive, naive_loss) = naive_o2b(&budget, st.c, online.step(), &st.xs, &st.ys);
        let avg = online.averaged();
        for (a, b) in avg.weights().iter().zip(naive.weights()) {
            prop_assert!((a - b).abs() <= 1e-12 * (1.0 + b.abs()), "{a} vs {b}");
        }
        prop_assert!((avg.bias() - naive.bias()).abs() <= 1e-12);
        prop_assert!((online.average_loss() - naive_loss).abs() <= 1e-12 * (1.0 + naive_loss));
    }
}

fn separable(m: usize, n: usize, seed: u64) -> Dataset {
    let mut rng = rng_from_seed(seed);
    let truth: Vec<f64> = (0..n)
        .map(|_| rng.random_range(0.5..1.0) * if rng.random_bool(0.5) { 1.0 } else { -1.0 })
        .collect();
    let mut rows = Vec::new();
    let mut ys = Vec::new();
    while rows.len() < m {
        let x: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let s: f64 = x.iter().zip(&truth).map(|(a, b)| a * b).sum();
        if s.abs() < 0.5 {
            continue; // margin
        }
        ys.push(Sign::of_score(s));
        rows.push(x);
    }
    Dataset::binary("sep", DenseMatrix::from_rows(&rows).unwrap(), ys).unwrap()
}

#[test]
fn separable_data_reach_low_test_error() {
    let all = separable(5000, 20, 1);
    let train = all.select(&(0..3000).collect::<Vec<_>>());
    let test = all.select(&(3000..5000).collect::<Vec<_>>());
    let fitted = O2bParams::new().c(1.0).budget(0.0).fit(&train).unwrap();
    let err = fitted.model.error_rate(&test).unwrap();
    assert!(err < 0.05, "one-pass test error {err}");
    // with a deletion budget of 2 features the (redundant) problem is still learnt
    let fitted = O2bParams::new()
        .c(1.0)
        .budget(2.0)
        .epochs(3)
        .shuffle_seed(Some(3))
        .fit(&train)
        .unwrap();
    let err = fitted.model.error_rate(&test).unwrap();
    assert!(err < 0.05, "N = 2 test error {err}");
    assert!(fitted.report.objective.unwrap() < fitted.report.details["online_average_loss"] + 1.0);
}

#[test]
fn streaming_equals_batch_and_is_reproducible() {
    let data = common::gaussian_data(300, 7, 0.5, 4);
    let p = O2bParams::new().c(0.7).budget(2.0);
    let batch = p.fit(&data).unwrap();
    let y = data.binary_labels().unwrap();
    let stream = p
        .fit_stream(7, data.len(), (0..data.len()).map(|i| (data.row(i), y[i])))
        .unwrap();
    assert_eq!(batch.model, stream.model);
    // sparse rows give the same model
    let sparse = data.with_features(data.features().to_csr().into()).unwrap();
    assert_eq!(p.fit(&sparse).unwrap().model, batch.model);
    // seeds reproduce, different seeds differ
    let q = p.clone().epochs(3).shuffle_seed(Some(11));
    assert_eq!(q.fit(&data).unwrap().model, q.fit(&data).unwrap().model);
    assert_ne!(
        q.fit(&data).unwrap().model,
        q.clone().shuffle_seed(Some(12)).fit(&data).unwrap().model
    );
    // warm start from the previous model
    let cont = p.fit_with(Some(batch.model.clone()), &data).unwrap();
    assert_eq!(cont.model.weights().len(), 7);
}

#[test]
fn integral_budget_updates_only_kept_features() {
    // one example, budget 1 on 3 uniform features: the most harmful kept feature is not updated
    let budget = FeatureBudget::uniform(3, 1.0).unwrap();
    let mut o = O2bOnline::new(budget, 1.0, 0.5)
        .unwrap()
        .starting_at(&LinearModel::try_new(vec![1.0, 0.1, -0.2], 0.0).unwrap())
        .unwrap();
    // P = 2: feature 0 has y w_j x_j = 0.9 > v_j/P = 0.5 (worth deleting), the others do not
    let x = [0.9, 0.5, 0.5];
    o.observe(RowView::Dense(&x), Sign::Pos).unwrap();
    let w = o.current().weights().to_vec();
    // feature 0 has the largest y w_j x_j: deleted, untouched
    assert_eq!(w[0], 1.0);
    assert!(
        (w[1] - 0.35).abs() < 1e-15 && (w[2] - 0.05).abs() < 1e-15,
        "{w:?}"
    );
    assert_eq!(o.current().bias(), 0.5);
}

#[test]
fn bad_input_is_a_typed_error() {
    let data = common::gaussian_data(10, 3, 1.0, 1);
    for c in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let e = O2bParams::new().c(c).fit(&data).unwrap_err().to_string();
        assert!(e.contains("`C`"), "{e}");
    }
    let e = O2bParams::new()
        .epochs(0)
        .fit(&data)
        .unwrap_err()
        .to_string();
    assert!(e.contains("epochs"), "{e}");
    let e = O2bParams::new()
        .budget(3.0)
        .fit(&data)
        .unwrap_err()
        .to_string();
    assert!(e.contains("budget"), "{e}");
    let e = O2bParams::new()
        .budget(f64::NAN)
        .fit(&data)
        .unwrap_err()
        .to_string();
    assert!(e.contains("budget"), "{e}");
    let e = O2bParams::new()
        .values(FeatureValues::Given(vec![1.0, -1.0, 1.0]))
        .fit(&data)
        .unwrap_err()
        .to_string();
    assert!(e.contains("values[2]"), "{e}");
    let e = O2bParams::new()
        .values(FeatureValues::Given(vec![1.0]))
        .fit(&data)
        .unwrap_err();
    assert!(matches!(e, bulwark_core::Error::ShapeMismatch { .. }));
    let one = Dataset::binary(
        "one",
        DenseMatrix::from_rows(&[vec![1.0], vec![2.0]]).unwrap(),
        vec![Sign::Pos; 2],
    )
    .unwrap();
    assert!(matches!(
        O2bParams::new().fit(&one).unwrap_err(),
        bulwark_core::Error::SingleClass { .. }
    ));
    // streaming: wrong length and non-finite values are rejected without changing the state
    let mut o = O2bParams::new().online(2, 10).unwrap();
    assert!(o.observe(RowView::Dense(&[1.0]), Sign::Pos).is_err());
    assert!(
        o.observe(RowView::Dense(&[1.0, f64::NAN]), Sign::Pos)
            .is_err()
    );
    assert!(
        o.observe(
            RowView::Sparse {
                indices: &[5],
                values: &[1.0]
            },
            Sign::Pos
        )
        .is_err()
    );
    assert_eq!(o.rounds(), 0);
    assert!(
        O2bParams::new()
            .fit_stream(2, 10, std::iter::empty())
            .is_err()
    );
}
