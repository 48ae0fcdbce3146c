// Select, SelectV2, Fill, ZerosLike/OnesLike, AddN (cwise_select_fill.cc).
// cw_select_<sfx>: out[i] = cond[ic] ? then[it] : else[ie] (cond: bool as
// uchar); flat (steps 0/1) and strided (long8 view, CW_CHUNK elements of a
// row per work-item; cw_offsets3 and CW_CHUNK from cwise_binary.cl) forms. cw_fill_<sfx>: out[i] = value[0] (a device
// scalar). cw_set_<sfx>: out[i] = v (a kernel argument).
#define CW_SELECT(T, SFX)                                                                  \
  __kernel void cw_select_##SFX(TENSOR(const uchar, c), TENSOR(const T, t),                \
                                TENSOR(const T, e), TENSOR(T, out), const long n,          \
                                const long sc, const long st, const long se) {             \
    INDEX_OR_RETURN(i, n);                                                                 \
    PTR(out)[i] = PTR(c)[i * sc] ? PTR(t)[i * st] : PTR(e)[i * se];                        \
  }                                                                                        \
  __kernel void cw_select_bc_##SFX(TENSOR(const uchar, c), TENSOR(const T, t),             \
                                   TENSOR(const T, e), TENSOR(T, out), const long rows,    \
                                   const long inner, const long chunks, const long8 dims,  \
                                   const long8 sc, const long8 st, const long8 se) {       \
    CW_ROW_CHUNK(rows, inner, chunks, dims);                                               \
    long ic, it, ie;                                                                       \
    cw_offsets3(row, od, sc, st, se, &ic, &it, &ie);                                       \
    const __global uchar* pc = PTR(c) + ic;                                                \
    const __global T* pt = PTR(t) + it;                                                    \
    const __global T* pe = PTR(e) + ie;                                                    \
    __global T* po = PTR(out) + row * inner;                                               \
    for (long j = j0; j < j1; ++j)                                                         \
      po[j] = pc[j * sc.s7] ? pt[j * st.s7] : pe[j * se.s7];                               \
  }                                                                                        \
  __kernel void cw_fill_##SFX(TENSOR(const T, value), TENSOR(T, out), const long n) {      \
    INDEX_OR_RETURN(i, n);                                                                 \
    PTR(out)[i] = PTR(value)[0];                                                           \
  }
CW_SELECT(float, f32)
CW_SELECT(long, i64)
CW_SELECT(uchar, b8)

__kernel void cw_set_f32(TENSOR(float, out), const long n, const float v) {
  INDEX_OR_RETURN(i, n);
  PTR(out)[i] = v;
}
__kernel void cw_set_i64(TENSOR(long, out), const long n, const long v) {
  INDEX_OR_RETURN(i, n);
  PTR(out)[i] = v;
}
