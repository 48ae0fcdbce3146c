// Select, SelectV2, Fill, ZerosLike/OnesLike, AddN (cwise_select_fill.cc).
// cw_select_<sfx>: out[i] = cond[ic] ? then[it] : else[ie] (cond: bool as
// uchar); flat (steps 0/1) and strided (long8 view, cw_offsets3 in
// cwise_binary.cl) forms. cw_fill_<sfx>: out[i] = value[0] (a device
// scalar). cw_set_<sfx>: out[i] = v (a kernel argument).
#define CW_SELECT(T, SFX)                                                                  \
  __kernel void cw_select_##SFX(TENSOR(const uchar, c), TENSOR(const T, t),                \
                                TENSOR(const T, e), TENSOR(T, out), const long n,          \
                                const long sc, const long st, const long se) {             \
    INDEX_OR_RETURN(i, n);                                                                 \
    PTR(out)[i] = PTR(c)[i * sc] ? PTR(t)[i * st] : PTR(e)[i * se];                        \
  }                                                                                        \
  __kernel void cw_select_bc_##SFX(TENSOR(const uchar, c), TENSOR(const T, t),             \
                                   TENSOR(const T, e), TENSOR(T, out), const long n,       \
                                   const long8 dims, const long8 sc, const long8 st,       \
                                   const long8 se) {                                       \
    INDEX_OR_RETURN(i, n);                                                                 \
    long ic, it, ie;                                                                       \
    cw_offsets3(i, dims, sc, st, se, &ic, &it, &ie);                                       \
    PTR(out)[i] = PTR(c)[ic] ? PTR(t)[it] : PTR(e)[ie];                                    \
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
