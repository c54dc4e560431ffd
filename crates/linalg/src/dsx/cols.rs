//! How the kernels walk an example's support `S_i`: [`Ident`] for dense rows (`0..k`,
//! contiguous, vectorisable loops) and `&[usize]` for CSR rows (the stored column indices).

#[derive(Debug, Clone, Copy)]
pub(super) struct Ident;

pub(super) trait Cols: Copy {
    /// The support is `0..k` (dense rows): kernels may use contiguous, vectorised loops.
    const CONTIGUOUS: bool = false;
    fn at(self, a: usize) -> usize;
    fn range_iter(self, a: usize, k: usize) -> impl Iterator<Item = usize>;
    /// `v[S]` as a contiguous slice (borrowed for dense rows, gathered into `buf` for CSR).
    fn gather<'v>(self, k: usize, src: &'v [f64], buf: &'v mut [f64]) -> &'v [f64];
    /// `dst[S[a]] += vals[a]`.
    fn scatter_add(self, dst: &mut [f64], vals: &[f64]);
    /// `dst[S[a]] = vals[a]`.
    fn scatter_set(self, dst: &mut [f64], vals: &[f64]);
}

impl Cols for Ident {
    const CONTIGUOUS: bool = true;

    #[inline(always)]
    fn at(self, a: usize) -> usize {
        a
    }

    #[inline(always)]
    fn range_iter(self, a: usize, k: usize) -> impl Iterator<Item = usize> {
        a..k
    }

    #[inline(always)]
    fn gather<'v>(self, k: usize, src: &'v [f64], _buf: &'v mut [f64]) -> &'v [f64] {
        &src[..k]
    }

    #[inline(always)]
    fn scatter_add(self, dst: &mut [f64], vals: &[f64]) {
        for (d, &v) in dst[..vals.len()].iter_mut().zip(vals) {
            *d += v;
        }
    }

    #[inline(always)]
    fn scatter_set(self, dst: &mut [f64], vals: &[f64]) {
        dst[..vals.len()].copy_from_slice(vals);
    }
}

impl Cols for &[usize] {
    #[inline(always)]
    fn at(self, a: usize) -> usize {
        self[a]
    }

    #[inline(always)]
    fn range_iter(self, a: usize, k: usize) -> impl Iterator<Item = usize> {
        self[a..k].iter().copied()
    }

    #[inline(always)]
    fn gather<'v>(self, k: usize, src: &'v [f64], buf: &'v mut [f64]) -> &'v [f64] {
        let buf = &mut buf[..k];
        for (b, &j) in buf.iter_mut().zip(self) {
            *b = src[j];
        }
        buf
    }

    #[inline(always)]
    fn scatter_add(self, dst: &mut [f64], vals: &[f64]) {
        for (&j, &v) in self.iter().zip(vals) {
            dst[j] += v;
        }
    }

    #[inline(always)]
    fn scatter_set(self, dst: &mut [f64], vals: &[f64]) {
        for (&j, &v) in self.iter().zip(vals) {
            dst[j] = v;
        }
    }
}
