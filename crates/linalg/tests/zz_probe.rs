#![allow(clippy::print_stderr)]
use bulwark_linalg::*;
use std::time::Instant;
fn minrun(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..reps { let t = Instant::now(); f(); best = best.min(t.elapsed().as_secs_f64()); }
    best * 1e3
}
#[test]
#[ignore]
fn probe() {
    for (m, n, dens) in [(10000usize, 196usize, 1.0f64), (10000, 784, 1.0), (10000, 784, 0.19)] {
        let data: Vec<f64> = (0..m * n).map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0).collect();
        let mut indptr = vec![0]; let mut indices = vec![]; let mut values = vec![];
        for i in 0..m { for j in 0..n { if ((i * 31 + j * 17) % 100) as f64 / 100.0 < dens { indices.push(j); values.push(data[i*n+j]); } } indptr.push(indices.len()); }
        let nnz = indices.len();
        let y: Vec<f64> = (0..m).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let v = vec![1.0; n];
        let f = |k: usize, s: usize| -> Vec<f64> { (0..k).map(|i| 0.5 + ((i * s) % 97) as f64 / 50.0).collect() };
        let (theta, phi, w, sigma, rho, kappa) = (f(m, 3), f(nnz, 5), f(n, 7), f(nnz, 11), f(m, 13), f(m, 17));
        let sc = DsxScalings { theta: &theta, phi: &phi, w_diag: &w, b_diag: 0.0, sigma: &sigma, rho: &rho, kappa: &kappa };
        let rows = if dens >= 1.0 { RowsRef::Dense { data: &data, m, n } } else { RowsRef::Csr { indptr: &indptr, indices: &indices, values: &values, n } };
        let mut sys = DsxSystem::try_new(rows, &y, &v, 1.0).unwrap();
        let mut z = vec![1.0; sys.len()];
        let tf = minrun(5, || { sys.factor(&sc).unwrap(); });
        let ts = minrun(5, || { sys.solve_in_place(&mut z).unwrap(); });
        let x = faer::Mat::from_fn(m, n, |i, j| data[i * n + j]);
        let mut c = faer::Mat::<f64>::zeros(n, n);
        let tg = minrun(5, || faer::linalg::matmul::matmul(c.as_mut(), faer::Accum::Replace, x.transpose(), x.as_ref(), 1.0, Par::Seq));
        eprintln!("{m}x{n} d{dens}: factor {tf:.1} ms solve {ts:.1} ms xtdx {tg:.1} ms ratio {:.2} kernel {:?}", (tf + ts) / tg, sys.kernel());
    }
}
