//! Records with missing features (`bulwark_core::missing`): the attacks and the certificate give
//! each record the budget left after what is missing, `max(0, N − Σ_{j missing} v_j)`. Checked
//! against the same record without a mask (its missing cells are zeros) at that budget.

use bulwark_adversary::{
    Attack, AttackBudget, AttackKind, CertifyOptions, Distribution, certify_with, halfspace_data,
};
use bulwark_core::{Dataset, Features, LinearModel, MissingMask, rng_from_seed};
use rand::Rng as _;

/// Gaussian halfspace data with about a fifth of the cells missing (zeroed and masked), a model
/// near the target, and non-uniform feature values.
fn setup(m: usize, n: usize, seed: u64) -> (LinearModel, Dataset, Vec<f64>) {
    let mut rng = rng_from_seed(seed);
    let u: Vec<f64> = (0..n).map(|j| 1.0 + (j % 4) as f64 * 0.5).collect();
    let data = halfspace_data(Distribution::Gaussian, &u, m, &mut rng).unwrap();
    let rows: Vec<Vec<usize>> = (0..m)
        .map(|_| (0..n).filter(|_| rng.random::<f64>() < 0.2).collect())
        .collect();
    let mask = MissingMask::from_rows(n, &rows).unwrap();
    let mut x = data.features().clone();
    x.delete_cells(&mask).unwrap();
    let data = data.with_features(x).unwrap().with_missing(mask).unwrap();
    let w: Vec<f64> = u.iter().map(|a| a * 0.7 + 0.05).collect();
    let values: Vec<f64> = (0..n).map(|j| 0.5 + (j % 3) as f64 * 0.75).collect();
    (LinearModel::try_new(w, 0.05).unwrap(), data, values)
}

#[test]
fn certificates_and_attacks_use_the_remaining_budget() {
    let (model, data, values) = setup(60, 12, 5);
    let mask = data.missing().unwrap().clone();
    assert!(mask.incomplete_rows() > 40);
    let budget = 4.0;
    let opts = CertifyOptions::default();
    let cert = certify_with(
        &model,
        &data,
        &AttackBudget::try_new(values.clone(), budget).unwrap(),
        &opts,
    )
    .unwrap();
    assert_eq!(cert.missing_records, mask.incomplete_rows());
    let greedy = Attack::new(AttackKind::GreedyDelete)
        .with_values(values.clone())
        .unwrap();
    let exact = Attack::new(AttackKind::ExactDelete)
        .with_values(values.clone())
        .unwrap();
    let attacked = greedy
        .run(&model, &data, budget, &mut rng_from_seed(0))
        .unwrap();
    let attacked_exact = exact
        .run(&model, &data, budget, &mut rng_from_seed(0))
        .unwrap();
    assert_eq!(attacked.data.missing(), Some(&mask));
    let random = Attack::new(AttackKind::RandomDelete)
        .run(&model, &data, 3.0, &mut rng_from_seed(1))
        .unwrap();
    let (mut spent, mut changed) = (0, 0);
    for i in 0..data.len() {
        // the record alone, its missing cells plain zeros, at the budget it has left
        let alone = data.select(&[i]).forget_missing();
        let left = mask.remaining_budget(i, &values, budget);
        assert_eq!(cert.per_example[i].budget, left);
        spent += usize::from(left < budget);
        let c = certify_with(
            &model,
            &alone,
            &AttackBudget::try_new(values.clone(), left).unwrap(),
            &opts,
        )
        .unwrap();
        let (a, b) = (cert.per_example[i], c.per_example[0]);
        assert_eq!((a.verdict, a.greedy_damage), (b.verdict, b.greedy_damage));
        for (attack, out) in [(&greedy, &attacked), (&exact, &attacked_exact)] {
            let o = attack
                .run(&model, &alone, left, &mut rng_from_seed(0))
                .unwrap();
            assert_eq!(
                out.data.row(i).bits(0..12),
                o.data.row(0).bits(0..12),
                "{} row {i}",
                attack.name()
            );
            changed += usize::from(o.touched > 0);
        }
        // random deletion counts features: what is missing is spent
        let deleted = (0..12)
            .filter(|&j| data.row(i).get(j) != 0.0 && random.data.row(i).get(j) == 0.0)
            .count();
        let nonzero = (0..12).filter(|&j| data.row(i).get(j) != 0.0).count();
        assert_eq!(
            deleted,
            3usize.saturating_sub(mask.row(i).len()).min(nonzero)
        );
    }
    assert!(spent > 40 && changed > 20, "{spent} {changed}");
}

trait Cells {
    fn bits(&self, r: std::ops::Range<usize>) -> Vec<u64>;
}

impl Cells for bulwark_core::RowView<'_> {
    fn bits(&self, r: std::ops::Range<usize>) -> Vec<u64> {
        r.map(|j| self.get(j).to_bits()).collect()
    }
}

#[test]
fn a_mask_survives_selection_and_sparse_storage() {
    let (model, data, values) = setup(20, 6, 9);
    let sparse = data
        .with_features(Features::Sparse(data.features().to_csr()))
        .unwrap();
    assert_eq!(sparse.missing(), data.missing());
    let b = AttackBudget::try_new(values, 2.0).unwrap();
    let (c1, c2) = (
        certify_with(&model, &data, &b, &CertifyOptions::default()).unwrap(),
        certify_with(&model, &sparse, &b, &CertifyOptions::default()).unwrap(),
    );
    assert_eq!(c1.per_example, c2.per_example);
    let idx = [3, 1, 1];
    let s = data.select(&idx);
    for (k, &i) in idx.iter().enumerate() {
        assert_eq!(s.missing().unwrap().row(k), data.missing().unwrap().row(i));
    }
}
