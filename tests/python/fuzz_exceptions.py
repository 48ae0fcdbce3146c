"""Fuzz cases whose verdict breaks the rules of fuzz_runner.verdict, each
with the reason: case id pattern -> (the verdicts it allows, reason).

Patterns are case ids (fuzz_cases.py: ``Op[type constraints]/input:mutation``)
where ``*`` matches anything (``[`` and ``]`` are literal). A reason starts
with its kind:

- "PDK bug, open": PDK is wrong; the entry keeps the suite green while the
  kernel is fixed, and must go with the fix: test_fuzz fails on an open
  bug whose cases all meet the rules again.
- "TF CPU bug": TensorFlow's CPU kernel is wrong (or reads memory it must
  not); what PDK does is right.
- "CPU limitation": TensorFlow's CPU kernel does not implement the call,
  PDK does; nothing to compare with.
- "Unspecified": the call has no single right answer (two things wrong with
  it and each device reports another first, NaN orders, C++ undefined
  behaviour).

PDK's own ops (``_Pdk*``) are not listed: test_fuzz accepts them raising
where their reference (the unfused TensorFlow ops, which broadcast and
validate differently) computes or raises another class; PDK's graph
optimizer only creates them from the valid patterns.
"""

CRASH = ("pdk_crash",)
COMPUTES = ("pdk_computes_where_cpu_raises",)
RAISES = ("pdk_raises_where_cpu_computes",)
CLASS = ("class_mismatch",)
VALUE = ("value_mismatch",)

EXCEPTIONS = {
    # ---- TensorFlow CPU bugs (PDK is right)
    "ImageProjectiveTransformV*[*]/attr *": (RAISES, (
        "TF CPU bug: an interpolation or fill_mode that is none of the op's values: the CPU "
        "kernel (image_ops.cc) logs 'Invalid interpolation' / 'Invalid mode' and computes with "
        "an uninitialized mode; PDK raises InvalidArgument with that wording")),
    "AvgPool3DGrad[*]/grad:dim*": (RAISES, (
        "TF CPU bug: as AvgPoolGrad grad:dim, in 3-D: AvgPooling3dGradOp (pooling_ops_3d.cc) "
        "never checks grad against the pooled shape of orig_input_shape and reads it at the "
        "pooled indices; PDK raises InvalidArgument 'Expected grad shape to be ...'")),
    "AvgPool3DGrad[*]/orig_input_shape:*": (RAISES + CLASS, (
        "TF CPU bug: as AvgPool3DGrad grad:dim (no check of grad against orig_input_shape); "
        "with a huge orig_input_shape the CPU runs out of memory first (ResourceExhausted)")),
    "AvgPoolGrad[*]/grad:dim*": (RAISES, (
        "TF CPU bug: AvgPoolGrad does not check grad's shape against the pooled "
        "orig_input_shape and computes (grad [2, 2, 2, 2] for orig_input [1, 4, 4, 2] writes "
        "past its output and corrupts the heap: a later malloc aborts); PDK raises "
        "InvalidArgument 'grad.shape ... != the pooled shape of orig_input'")),
    "AvgPoolGrad[*]/orig_input_shape:*": (RAISES + CLASS, (
        "TF CPU bug: as AvgPoolGrad grad:dim (no check of grad against orig_input_shape); "
        "with a huge orig_input_shape the CPU runs out of memory first (ResourceExhausted)")),
    "AvgPoolGrad[*]/attr ksize:[*]=*": (RAISES, (
        "TF CPU bug: AvgPoolGrad accepts a spatial ksize of 0 or -1 and computes; AvgPool "
        "itself rejects it ('Sliding window ksize must be positive'), as PDK does")),
    "DepthwiseConv2dNativeBackprop*[*]/attr dilations:*": (RAISES + VALUE, (
        "TF CPU bug: the CPU's depthwise backprops ignore `dilations` (see "
        "tests/python/test_kernels_conv_pool.py): they compute with invalid dilations and "
        "without valid ones; PDK validates and applies them")),
    "DepthwiseConv2dNative[*]/attr dilations:len*": (RAISES, (
        "TF CPU bug: DepthwiseConv2dNative does not check that dilations has 4 entries "
        "([1, 1, 1, 1, 1] and [1, 1, 1] compute); PDK raises 'dilations must have 4 elements'")),
    "Conv3D[*]/attr strides:[*]=huge": (VALUE, (
        "TF CPU bug: Conv3D with a stride of 2147483647 (float64 [1, 3, 4, 5, 2] input, "
        "SAME): the CPU's values are wrong (off by up to 3.7 from a NumPy reference, PDK within "
        "1e-15): its index arithmetic overflows")),
    "Transpose[*Tperm=int64]/perm:[*]=m*": (RAISES, (
        "TF CPU bug: the CPU reads int64 perm entries as int32 (9223372036854775807 -> -1, "
        "-9223372036854775808 -> 0) and transposes; PDK raises '... is out of range'")),
    "TopKV2[*Tk=int64]/k:[0]=min": (RAISES, (
        "TF CPU bug: the CPU reads an int64 k as int32 (-9223372036854775808 -> 0) and returns "
        "k=0; PDK raises 'Need k >= 0'")),
    "Stateless*V2[*]/counter:len-1": (RAISES, (
        "TF CPU bug: a Philox counter of length 1 (Philox needs 2): the CPU reads past it, its "
        "results differ from run to run; PDK raises 'counter must be a vector of length at "
        "least 2 for Philox'")),
    "Einsum[*]/inputs:[*]dim*=0": (RAISES, (
        "TF CPU bug: Einsum 'ij,jk->ik' of [3, 0] and [4, 5]: the CPU computes although label "
        "j has size 0 in one input and 4 in the other; PDK raises InvalidArgument")),
    "FusedBatchNorm*[*]/x:dim*=0": (VALUE, (
        "TF CPU bug: training batch norm over zero elements: the CPU leaves reserve_space_1 "
        "(the batch mean) uninitialized (values such as 2.6e20), PDK writes 0")),

    # ---- CPU limitations
    "Conv2DBackpropInput[*]/attr dilations:[*]=huge": (COMPUTES, (
        "CPU limitation: 'Current CPU implementations do not yet support dilation rates larger "
        "than 1'; PDK computes")),
    "DepthwiseConv2dNative[*]/attr dilations:[*]=huge": (COMPUTES, (
        "CPU limitation: 'Current kernel implementation does not support dilations'")),
    "DepthwiseConv2dNative[*]/attr strides:[*]=huge": (COMPUTES, (
        "CPU limitation: 'Current implementation only supports equal length strides in the "
        "row and column dimensions'")),

    # ---- TensorFlow's oneDNN kernels (float32, bfloat16, float16 where oneDNN
    # is on: an AVX-512 CPU with TF_ENABLE_ONEDNN_OPTS unset or 1; the suite
    # sets 0, conftest.py; the Eigen kernels raise as PDK)
    **{f"{op}[T={t}*]/*": (CLASS, (
        "TF CPU bug: TensorFlow's oneDNN convolution backprops report an out_backprop whose "
        "shape or rank is not the convolution's output's (after a changed padding, stride, "
        "size or operand) as AbortedError ('could not create a descriptor for the convolution "
        "forward propagation primitive'); its Eigen kernels and PDK say InvalidArgument"))
       for op in ("Conv2DBackprop*", "Conv3DBackprop*", "DepthwiseConv2dNativeBackprop*")
       for t in ("float32", "bfloat16", "float16")},
    **{f"{op}[T={t}]/attr {a}": (RAISES, (
        "TF CPU bug: TensorFlow's oneDNN kernels accept explicit_paddings with padding other "
        "than EXPLICIT, and padding EXPLICIT without explicit_paddings, and compute; its Eigen "
        "kernels (float64) reject both, as PDK does"))
       for op in ("Conv2D*", "DepthwiseConv2dNative*") for t in ("float32", "bfloat16", "float16")
       for a in ("explicit_paddings:*", "padding:EXPLICIT")},
    **{f"{op}[T={t}]/attr {a}:len+1": (RAISES, (
        "TF CPU bug: TensorFlow's oneDNN pooling kernels accept a ksize or strides of 5 entries "
        "and compute; its Eigen kernels (float64) reject it ('Sliding window ksize field must "
        "specify 4 dimensions'), as PDK does"))
       for op in ("MaxPool", "AvgPool", "AvgPoolGrad", "MaxPoolGrad")
       for t in ("float32", "bfloat16", "float16") for a in ("ksize", "strides")},

    # ---- Unspecified: TensorFlow's two CPU kernels disagree. Which one runs
    # depends on the CPU and TF_ENABLE_ONEDNN_OPTS (oneDNN for float32,
    # bfloat16 and some float16 ops by default on AVX-512 CPUs, Eigen
    # otherwise); the suite's reference is the Eigen kernels (conftest.py), and
    # PDK answers as the oneDNN float32 kernel, so any dtype may differ.
    **{f"{op}[*]/attr {a}:*": (CLASS, (
        "Unspecified: TensorFlow's CPU kernels disagree: for a batch or depth stride or "
        "dilation, its oneDNN kernel says InvalidArgument, its Eigen kernel Unimplemented; "
        "PDK answers as the oneDNN float32 kernel"))
       for op, a in (("Conv2D", "dilations"), ("Conv2DBackpropInput", "strides"),
                     ("Conv2DBackpropInput", "dilations"))},
    "Conv3D[*]/attr strides:*": (CLASS, (
        "Unspecified: TensorFlow's CPU kernels disagree: for a batch or depth stride its oneDNN "
        "Conv3D says Unimplemented, its Eigen kernel InvalidArgument; PDK answers as the oneDNN "
        "float32 kernel")),
    "DepthwiseConv2dNative[*]/attr dilations:*": (CLASS, (
        "Unspecified: TensorFlow's Eigen DepthwiseConv2dNative has no dilations and says "
        "Unimplemented for any; its oneDNN kernel and PDK check them: InvalidArgument")),
    **{f"{op}[*]/attr ksize:*": (CLASS, (
        "Unspecified: TensorFlow's CPU kernels disagree: its oneDNN AvgPool / AvgPoolGrad "
        "check ksize > 0 before the batch and depth windows (InvalidArgument), its Eigen "
        "kernels the batch window first (Unimplemented), and Eigen's AvgPoolGrad a depth window "
        "before ksize; PDK answers as the oneDNN float32 kernel (src/kernels/nn/pooling.cc, "
        "CheckPoolWindow)"))
       for op in ("AvgPool", "AvgPoolGrad")},
    # ---- Unspecified
    "MirrorPad*[*]/input:rank+5": (CLASS, (
        "Unspecified: a rank-7 input with paddings for rank 2: the CPU reports its rank limit "
        "(Unimplemented 'inputs rank not in [0,5]'), PDK the paddings mismatch")),
    "BroadcastTo[*]/shape:*": (CLASS, (
        "Unspecified: a huge target shape the input cannot be broadcast to: the CPU runs out "
        "of memory allocating it first, PDK reports the broadcast error first")),
    "Conv*[*]/*:specials": (VALUE, (
        "Unspecified: NaN/inf in a convolution's operands: where 0 x inf (from zero padding) "
        "makes NaN depends on whether the padding is multiplied (the CPU pads explicitly, PDK "
        "skips the padded taps)")),
    "DepthwiseConv2dNative*[*]/*:specials": (VALUE, "Unspecified: as Conv specials"),
    "_PdkFusedConv2D[*]/*:specials": (VALUE, "Unspecified: as Conv specials"),
    "TopKV2[*]/input:specials": (VALUE, "Unspecified: TopKV2 of NaNs (NaN has no order)"),
    "HSVToRGB[T=bfloat16]/images:specials": (VALUE, "Unspecified: as RGBToHSV's bfloat16 NaNs"),
    "RGBToHSV[T=bfloat16]/images:specials": (VALUE, (
        "Unspecified: the sign bit of a bfloat16 NaN: TF's CPU rounds its "
        "float32 steps to bfloat16 with Eigen's packet conversion, which makes every NaN +NaN "
        "(0x7fc0), for most elements and with the scalar one, which keeps the sign, for the "
        "others; PDK keeps the sign. The NaN positions are the CPU's")),
    "MaxPool3D[*]/input:specials": (VALUE, (
        "Unspecified: MaxPool3D of NaNs and signed zeros: the CPU's Eigen reduction "
        "(CuboidMaxPooling) takes its packet path (a NaN or an equal value never replaces the "
        "running maximum, as PDK and the CPU's MaxPool) for the outputs whose 8-wide packet "
        "lies inside one position's channels, its scalar path (the later of a NaN or an "
        "equal value wins) for the others, so a channel's result depends on its flat index")),
    "Cast[*DstT=*int*]/x:specials": (VALUE, (
        "Unspecified: casting NaN or inf to an integer is undefined behaviour in C++ (the CPU "
        "gives INT_MIN, PDK another value)")),
}
