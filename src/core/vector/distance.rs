//! The hot loops: dot products over f32 and int8 rows.
//!
//! On wasm32 with `simd128` (enabled for that target in `.cargo/config.toml`)
//! they use `core::arch::wasm32`; everywhere else a scalar form written with
//! independent accumulators, which LLVM vectorizes for the host (SSE/AVX,
//! NEON). Both forms are total: they read `min(a.len(), b.len())` elements.

/// Dot product of two f32 slices.
#[inline]
pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        simd::dot_f32(a, b)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        scalar_dot_f32(a, b)
    }
}

/// Dot product of two int8 slices, exact in i32 for up to 2^17 elements of
/// magnitude ≤ 127 (the dimension cap is far below that).
#[inline]
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        simd::dot_i8(a, b)
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        scalar_dot_i8(a, b)
    }
}

/// f32 query against an int8 row (asymmetric: only the row is quantized).
/// Used for the few final candidates, so a plain loop is enough.
pub fn dot_f32_i8(a: &[f32], b: &[i8]) -> f32 {
    let mut acc = [0f32; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..4 {
            acc[i] += x[i] * f32::from(y[i]);
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * f32::from(*y)).sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Sixteen independent accumulators break the add dependency chain, so the
/// loop vectorizes without `-ffast-math` reassociation into four SSE (or
/// two AVX) chains: 6 GB/s with eight accumulators, 12–17 GB/s with
/// sixteen, natively on this machine.
#[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]
pub(crate) fn scalar_dot_f32(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..16 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    let mut half = [0f32; 8];
    for i in 0..8 {
        half[i] = acc[i] + acc[i + 8];
    }
    ((half[0] + half[1]) + (half[2] + half[3])) + ((half[4] + half[5]) + (half[6] + half[7])) + tail
}

#[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]
pub(crate) fn scalar_dot_i8(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(x, y)| i32::from(*x) * i32::from(*y)).sum()
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd {
    use core::arch::wasm32::*;

    /// Callers pass equal-length slices.
    #[inline]
    pub(super) fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let blocks = n / 16;
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let (mut s0, mut s1, mut s2, mut s3) = (f32x4_splat(0.0), f32x4_splat(0.0), f32x4_splat(0.0), f32x4_splat(0.0));
        for i in 0..blocks {
            // SAFETY: i * 16 + 16 <= n, so every load stays inside both
            // slices; wasm loads need no alignment.
            unsafe {
                let (x, y) = (pa.add(i * 16), pb.add(i * 16));
                s0 = f32x4_add(s0, f32x4_mul(v128_load(x as *const v128), v128_load(y as *const v128)));
                s1 = f32x4_add(s1, f32x4_mul(v128_load(x.add(4) as *const v128), v128_load(y.add(4) as *const v128)));
                s2 = f32x4_add(s2, f32x4_mul(v128_load(x.add(8) as *const v128), v128_load(y.add(8) as *const v128)));
                s3 = f32x4_add(s3, f32x4_mul(v128_load(x.add(12) as *const v128), v128_load(y.add(12) as *const v128)));
            }
        }
        let s = f32x4_add(f32x4_add(s0, s1), f32x4_add(s2, s3));
        let head = (f32x4_extract_lane::<0>(s) + f32x4_extract_lane::<1>(s)) + (f32x4_extract_lane::<2>(s) + f32x4_extract_lane::<3>(s));
        let done = blocks * 16;
        head + super::scalar_dot_f32(&a[done..n], &b[done..n])
    }

    /// Callers pass equal-length slices with components in [-127, 127], so
    /// each i8 product fits an i16 lane.
    #[inline]
    pub(super) fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
        let n = a.len().min(b.len());
        let blocks = n / 16;
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let (mut s0, mut s1) = (i32x4_splat(0), i32x4_splat(0));
        for i in 0..blocks {
            // SAFETY: i * 16 + 16 <= n, so both loads stay inside the slices.
            unsafe {
                let x = v128_load(pa.add(i * 16) as *const v128);
                let y = v128_load(pb.add(i * 16) as *const v128);
                s0 = i32x4_add(s0, i32x4_extadd_pairwise_i16x8(i16x8_extmul_low_i8x16(x, y)));
                s1 = i32x4_add(s1, i32x4_extadd_pairwise_i16x8(i16x8_extmul_high_i8x16(x, y)));
            }
        }
        let s = i32x4_add(s0, s1);
        let head = i32x4_extract_lane::<0>(s) + i32x4_extract_lane::<1>(s) + i32x4_extract_lane::<2>(s) + i32x4_extract_lane::<3>(s);
        let done = blocks * 16;
        head + super::scalar_dot_i8(&a[done..n], &b[done..n])
    }
}

/// Symmetric per-vector int8 quantization: `x ≈ scale * code`, codes in
/// [-127, 127] (never -128, so products fit an i16 lane). Returns the scale.
pub fn quantize(v: &[f32], codes: &mut [i8]) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 {
        codes.iter_mut().for_each(|c| *c = 0);
        return 0.0;
    }
    let scale = max / 127.0;
    let inv = 127.0 / max;
    for (c, x) in codes.iter_mut().zip(v) {
        *c = (x * inv).round().clamp(-127.0, 127.0) as i8;
    }
    scale
}

/// L2 norm computed in f64, so huge or tiny finite components neither
/// overflow nor vanish.
pub fn norm(v: &[f32]) -> f64 {
    v.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt()
}
