// float32 NHWC convolutions, plain and grouped, on oneDNN (see dnnl_conv.h).
//
// Each thread keeps its own oneDNN stream and a small cache of primitives
// keyed by (kind, geometry of its batch slice, OpenMP team size): creating a
// convolution primitive descriptor costs tens of microseconds to milliseconds
// (oneDNN's own primitive cache still needs the descriptor per call).
#include "compute/dnnl_conv.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "compute/dnnl_api.h"
#include "compute/dnnl_common.h"
#include "compute/eigen.h"
#include "compute/gemm.h"

namespace pdk_compute {
namespace {

struct Key {
  DnnlConvKind kind;
  DnnlConvShape s;  // n = the batch slice
  int team;         // OpenMP threads the primitive was created for
  bool operator==(const Key& o) const {
    return kind == o.kind && team == o.team && std::memcmp(&s, &o.s, sizeof(s)) == 0;
  }
};

// A primitive with its three memory objects (data handles set per call):
// mem[0], mem[1] the inputs (a, b of dnnl_conv.h), mem[2] the output.
struct Entry {
  Key key;
  dnnl_primitive_t prim = nullptr;
  dnnl_memory_t mem[3] = {nullptr, nullptr, nullptr};
  int arg[3] = {0, 0, 0};
  // When the primitive wants its own (blocked) filter layout `blocked_md`:
  // mem[wi] is in that layout, `plain` wraps the caller's [KH,KW,C/G,F] filter
  // and `reorder` converts between them (plain -> blocked before a forward /
  // backward-data run; blocked -> plain after a backward-weights run).
  // `wbuf` holds the blocked filter (`blocked_floats` floats, padding included).
  // `blocked_md` is this entry's own copy (the primitive descriptor it was
  // queried from is destroyed after Create).
  int wi = 1;
  dnnl_primitive_t reorder = nullptr;
  dnnl_memory_t plain = nullptr;
  DnnlMd blocked_md;
  int64_t blocked_floats = 0;
  std::unique_ptr<float[]> wbuf;

  Entry() = default;
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;
  ~Entry() {
    if (prim) dnnl_primitive_destroy(prim);
    for (auto* m : mem)
      if (m) dnnl_memory_destroy(m);
    if (reorder) dnnl_primitive_destroy(reorder);
    if (plain) dnnl_memory_destroy(plain);
  }
  // True if `o` keeps its filter in the same blocked layout.
  bool SameBlocking(const Entry& o) const {
    return reorder && o.reorder && dnnl_memory_desc_equal(blocked_md.get(), o.blocked_md.get());
  }
};

// Returns an Internal status naming the oneDNN call if it fails.
#define PDK_DNNL_TRY(call)                                                  \
  do {                                                                      \
    const dnnl_status_t st_ = (call);                                       \
    if (st_ != dnnl_success)                                                \
      return pdk::Internal("oneDNN ", #call, " failed: status ", int(st_)); \
  } while (0)

// Creates the primitive for `key` (memory descriptors with TF's layouts).
pdk::Status Create(const Key& key, Entry& e) {
  dnnl_engine_t eng = DnnlEngine();
  if (eng == nullptr) return pdk::Internal("oneDNN: no CPU engine");
  const DnnlConvShape& s = key.s;
  const dnnl_dims_t src_dims = {s.n, s.c, s.h, s.w};
  // Weights: [F, C, KH, KW] as hwio, or grouped [G, F/G, C/G, KH, KW] as hwigo
  // (dnnl_conv.h: TF's [KH,KW,C/G,F] buffer read in place).
  const bool grouped = s.groups > 1;
  const int wei_ndims = grouped ? 5 : 4;
  const dnnl_dims_t wei_dims = {s.f, s.c, s.kh, s.kw};
  const dnnl_dims_t gwei_dims = {s.groups, s.f / s.groups, s.c / s.groups, s.kh, s.kw};
  const dnnl_format_tag_t wei_tag = grouped ? dnnl_hwigo : dnnl_hwio;
  const dnnl_dims_t dst_dims = {s.n, s.f, s.oh, s.ow};
  const dnnl_dims_t strides = {s.sh, s.sw};
  const dnnl_dims_t dilates = {s.dh - 1, s.dw - 1};
  const dnnl_dims_t pad_l = {s.pt, s.pl};
  const dnnl_dims_t pad_r = {
      std::max<int64_t>(0, (s.oh - 1) * s.sh + (s.kh - 1) * s.dh + 1 - s.h - s.pt),
      std::max<int64_t>(0, (s.ow - 1) * s.sw + (s.kw - 1) * s.dw + 1 - s.w - s.pl)};
  DnnlMd src_md, wei_md, plain_wei_md, dst_md;
  PDK_DNNL_TRY(src_md.InitTag(4, src_dims, dnnl_f32, dnnl_nhwc));
  PDK_DNNL_TRY(
      plain_wei_md.InitTag(wei_ndims, grouped ? gwei_dims : wei_dims, dnnl_f32, wei_tag));
  PDK_DNNL_TRY(
      wei_md.InitTag(wei_ndims, grouped ? gwei_dims : wei_dims, dnnl_f32, dnnl_format_tag_any));
  PDK_DNNL_TRY(dst_md.InitTag(4, dst_dims, dnnl_f32, dnnl_nhwc));

  const DnnlConvGeometry geom{strides, dilates, pad_l, pad_r};
  dnnl_primitive_desc_t fwd_pd = nullptr, pd = nullptr;
  PDK_DNNL_TRY(DnnlConvPd(&fwd_pd, eng, dnnl_forward_training, src_md.get(), wei_md.get(),
                          dst_md.get(), geom, nullptr));
  e.key = key;
  DnnlMdRef mds[3];
  dnnl_status_t st = dnnl_success;
  if (key.kind == DnnlConvKind::kForward) {
    pd = fwd_pd;
    fwd_pd = nullptr;
    mds[0] = src_md.get(), mds[1] = wei_md.get(), mds[2] = dst_md.get();
    e.arg[0] = DNNL_ARG_SRC, e.arg[1] = DNNL_ARG_WEIGHTS, e.arg[2] = DNNL_ARG_DST;
  } else if (key.kind == DnnlConvKind::kBackwardData) {
    st = DnnlConvPd(&pd, eng, dnnl_backward_data, src_md.get(), wei_md.get(), dst_md.get(), geom,
                    fwd_pd);
    mds[0] = dst_md.get(), mds[1] = wei_md.get(), mds[2] = src_md.get();
    e.arg[0] = DNNL_ARG_DIFF_DST, e.arg[1] = DNNL_ARG_WEIGHTS, e.arg[2] = DNNL_ARG_DIFF_SRC;
  } else {
    st = DnnlConvPd(&pd, eng, dnnl_backward_weights, src_md.get(), wei_md.get(), dst_md.get(),
                    geom, fwd_pd);
    mds[0] = src_md.get(), mds[1] = dst_md.get(), mds[2] = wei_md.get();
    e.arg[0] = DNNL_ARG_SRC, e.arg[1] = DNNL_ARG_DIFF_DST, e.arg[2] = DNNL_ARG_DIFF_WEIGHTS;
    e.wi = 2;
  }
  if (fwd_pd) dnnl_primitive_desc_destroy(fwd_pd);
  if (st != dnnl_success)
    return pdk::Internal("oneDNN backward convolution descriptor: status ", int(st));
  // The filter layout the primitive chose (format "any").
  const DnnlMdRef chosen = dnnl_primitive_desc_query_md(
      pd, e.wi == 2 ? dnnl_query_diff_weights_md : dnnl_query_weights_md, 0);
  if (chosen == nullptr) st = dnnl_runtime_error;
  const bool blocked = st == dnnl_success && !dnnl_memory_desc_equal(chosen, plain_wei_md.get());
  if (st == dnnl_success) mds[e.wi] = blocked ? chosen : plain_wei_md.get();
  if (st == dnnl_success) st = dnnl_primitive_create(&e.prim, pd);
  for (int i = 0; i < 3 && st == dnnl_success; ++i)
    st = dnnl_memory_create(&e.mem[i], mds[i], eng, DNNL_MEMORY_NONE);
  if (blocked && st == dnnl_success) {
    e.blocked_floats = int64_t((dnnl_memory_desc_get_size(chosen) + 3) / 4);
    e.wbuf.reset(new float[e.blocked_floats]);
    st = e.blocked_md.InitCopy(chosen);
    if (st == dnnl_success)
      st = dnnl_memory_create(&e.plain, plain_wei_md.get(), eng, DNNL_MEMORY_NONE);
    dnnl_primitive_desc_t rpd = nullptr;
    if (st == dnnl_success)
      st = e.wi == 2 ? dnnl_reorder_primitive_desc_create(&rpd, chosen, eng, plain_wei_md.get(),
                                                          eng, nullptr)
                     : dnnl_reorder_primitive_desc_create(&rpd, plain_wei_md.get(), eng, chosen,
                                                          eng, nullptr);
    if (st == dnnl_success) st = dnnl_primitive_create(&e.reorder, rpd);
    if (rpd) dnnl_primitive_desc_destroy(rpd);
  }
  dnnl_primitive_desc_destroy(pd);
  if (st != dnnl_success) return pdk::Internal("oneDNN convolution primitive: status ", int(st));
  return pdk::Status::OK();
}

// Per-thread state: the stream and the most recently used primitives.
class ThreadState {
 public:
  ~ThreadState() {
    cache_.clear();  // before the stream (a member declared first)
  }

  // The cached primitive for `key`, created on a miss. Entries stay at their
  // address until evicted (kCapacity later misses of this thread).
  pdk::StatusOr<Entry*> Get(const Key& key) {
    if (stream_.get() == nullptr) return pdk::Internal("oneDNN: no stream");
    for (size_t i = 0; i < cache_.size(); ++i)
      if (cache_[i]->key == key) {  // a hit moves to the back (least recently used first)
        std::rotate(cache_.begin() + i, cache_.begin() + i + 1, cache_.end());
        return cache_.back().get();
      }
    auto fresh = std::make_unique<Entry>();
    PDK_RETURN_IF_ERROR(Create(key, *fresh));
    if (cache_.size() >= kCapacity) cache_.erase(cache_.begin());  // least recently used
    cache_.push_back(std::move(fresh));
    return cache_.back().get();
  }

  // Runs `e` on this thread's stream. `wblk`: the filter in e's blocked
  // layout, already reordered by the caller (forward / backward data), or
  // where to leave the blocked filter gradient for the caller (backward
  // weights; `out` is then not written). nullptr: this call reorders between
  // the plain filter and e's own buffer itself.
  pdk::Status Exec(Entry* e, const float* a, const float* b, float* out, float* wblk) {
    void* ptrs[3] = {const_cast<float*>(a), const_cast<float*>(b), out};
    dnnl_exec_arg_t args[3];
    for (int i = 0; i < 3; ++i) {
      if (i == e->wi && e->reorder) {
        PDK_DNNL_TRY(dnnl_memory_set_data_handle(e->plain, ptrs[i]));
        PDK_DNNL_TRY(dnnl_memory_set_data_handle(e->mem[i], wblk ? wblk : e->wbuf.get()));
      } else {
        PDK_DNNL_TRY(dnnl_memory_set_data_handle(e->mem[i], ptrs[i]));
      }
      args[i] = {e->arg[i], e->mem[i]};
    }
    const bool to_blocked = e->wi != 2;
    if (e->reorder && !wblk && to_blocked) PDK_RETURN_IF_ERROR(RunReorder(e));
    PDK_DNNL_TRY(dnnl_primitive_execute(e->prim, stream_.get(), 3, args));
    if (e->reorder && !wblk && !to_blocked) PDK_RETURN_IF_ERROR(RunReorder(e));
    PDK_DNNL_TRY(dnnl_stream_wait(stream_.get()));
    return pdk::Status::OK();
  }

  // e's reorder between the plain filter `plain` and the blocked one `blk`
  // (direction as in Entry), on this thread.
  pdk::Status Reorder(Entry* e, float* plain, float* blk) {
    PDK_DNNL_TRY(dnnl_memory_set_data_handle(e->plain, plain));
    PDK_DNNL_TRY(dnnl_memory_set_data_handle(e->mem[e->wi], blk));
    PDK_RETURN_IF_ERROR(RunReorder(e));
    PDK_DNNL_TRY(dnnl_stream_wait(stream_.get()));
    return pdk::Status::OK();
  }

 private:
  // Executes e's reorder on the handles currently set (no wait).
  pdk::Status RunReorder(Entry* e) {
    const bool to_blocked = e->wi != 2;
    const dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_FROM, to_blocked ? e->plain : e->mem[e->wi]},
                                      {DNNL_ARG_TO, to_blocked ? e->mem[e->wi] : e->plain}};
    PDK_DNNL_TRY(dnnl_primitive_execute(e->reorder, stream_.get(), 2, rargs));
    return pdk::Status::OK();
  }

  // A ResNet50 training step uses about 60 (kind, geometry) pairs.
  static constexpr size_t kCapacity = 256;
  DnnlThreadStream stream_;
  std::vector<std::unique_ptr<Entry>> cache_;
};

ThreadState& State() {
  thread_local ThreadState state;
  return state;
}

// Backward weights runs as batch slices (partial gradients summed) only when
// each shard has at least this many output rows (N*OH*OW / shards), else as one
// primitive with an OpenMP team, which splits the filter, not the batch: with
// few rows per shard (late ResNet stages: 2x2 or 4x4 outputs, filters of
// 0.3-1 M elements) writing and adding one partial gradient per shard costs
// more than the products. Measured on ResNet50 64x64 batch 16's filter
// gradients (bench/bench_conv_grads.py; 2 threads, 4 shards;
// docs/benchmarks.md, "Convolutions"): the
// team is up to 1.9x faster at 16 and 64 rows per shard, 1.05-1.25x at 256,
// and 2.2x slower on a 1x1 64->256 filter at 1024 rows.
constexpr int64_t kBwMinRowsPerShard = 512;

// A convolution of fewer multiply-adds than this runs as one primitive on the
// calling thread with an OpenMP team of one: its work (~10 us at oneDNN's
// single-core rate) is less than handing it to the pool or a libgomp team,
// whose threads spin at a barrier while another process holds the second
// core (a ConvLSTM2D on 2x2 maps: a 32-row filter gradient took 2-12 ms with
// a team of two and a busy core, measured).
constexpr int64_t kSerialMultiplyAdds = 1 << 19;

// The part of a convolution one shard computes: a primitive for `s` (a
// batch slice, or a band of output rows of one image) reading `a` + a_off and
// writing `out` + out_off (backward weights: reading b + out_off).
struct Slice {
  DnnlConvShape s;
  int64_t a_off, out_off;
};

// Forward pass, image `img`, output rows [o0, o1): the input rows that band
// reads, with its own top and bottom padding; false if it reads no input row
// (a band entirely in explicit padding).
bool RowBand(const DnnlConvShape& s, int64_t img, int64_t o0, int64_t o1, Slice* out) {
  const int64_t first = o0 * s.sh - s.pt;                          // first row read, < 0: padding
  const int64_t last = (o1 - 1) * s.sh - s.pt + (s.kh - 1) * s.dh;  // last row read
  const int64_t i0 = std::max<int64_t>(0, first), i1 = std::min<int64_t>(s.h, last + 1);
  if (i1 <= i0) return false;
  out->s = s;
  out->s.n = 1, out->s.h = i1 - i0, out->s.oh = o1 - o0, out->s.pt = i0 - first;
  out->a_off = (img * s.h + i0) * s.w * s.c;
  out->out_off = (img * s.oh + o0) * s.ow * s.f;
  return true;
}

}  // namespace

pdk::Status DnnlConv2D(const Eigen::ThreadPoolDevice& dev, DnnlConvKind kind,
                       const DnnlConvShape& s, const float* a, const float* b, float* out) {
  const bool bw = kind == DnnlConvKind::kBackwardWeights;
  const int threads = std::max(1, dev.numThreads());
  const int64_t target = threads * kShardsPerThread;
  // Per-image element counts of a (x or dy) and out (y or dx).
  const int64_t x_img = s.h * s.w * s.c, y_img = s.oh * s.ow * s.f;
  const int64_t a_img = kind == DnnlConvKind::kBackwardData ? y_img : x_img;
  const int64_t out_img = kind == DnnlConvKind::kBackwardData ? x_img : y_img;
  const int64_t wsize = s.kh * s.kw * (s.c / s.groups) * s.f;
  if (s.n * s.oh * s.ow * wsize < kSerialMultiplyAdds) {
    ThreadState& self = State();  // its OpenMP team is one thread (DnnlThreadStream)
    pdk::StatusOr<Entry*> e = self.Get(Key{kind, s, 1});
    return e.ok() ? self.Exec(*e, a, b, out, nullptr) : e.status();
  }

  // Shards: slices of the batch; in the forward pass with fewer images than
  // threads (inference on one image), bands of output rows of each image.
  std::vector<Slice> slices;
  // Backward weights with few output rows per shard: one primitive with a team.
  const bool bw_team = bw && threads > 1 &&
                       s.n * s.oh * s.ow / std::min<int64_t>(target, s.n) < kBwMinRowsPerShard;
  if (bw_team) {
    // slices stay empty: the team path below
  } else if (s.n >= threads || threads == 1) {
    const int64_t shards = std::min<int64_t>(target, s.n);
    for (int64_t i = 0; i < shards; ++i) {
      const int64_t n0 = s.n * i / shards, n1 = s.n * (i + 1) / shards;
      Slice sl{s, n0 * a_img, n0 * out_img};
      sl.s.n = n1 - n0;
      slices.push_back(sl);
    }
  } else if (kind == DnnlConvKind::kForward && s.oh > 1) {
    const int64_t bands = std::min<int64_t>(s.oh, (target + s.n - 1) / s.n);
    Slice sl;
    for (int64_t img = 0; img < s.n; ++img)
      for (int64_t i = 0; i < bands; ++i) {
        if (!RowBand(s, img, s.oh * i / bands, s.oh * (i + 1) / bands, &sl)) {
          slices.clear();
          break;
        }
        slices.push_back(sl);
      }
  }
  if (slices.empty()) {  // one primitive on the calling thread with an OpenMP team
    ThreadState& self = State();
    omp_set_num_threads(threads);
    pdk::StatusOr<Entry*> e = self.Get(Key{kind, s, threads});
    pdk::Status r = e.ok() ? self.Exec(*e, a, b, out, nullptr) : e.status();
    omp_set_num_threads(1);
    return r;
  }
  const int64_t shards = static_cast<int64_t>(slices.size());
  auto key = [&](int64_t i) { return Key{kind, slices[i].s, 1}; };

  // When shard 0's primitive wants a blocked filter, the filter is reordered
  // once (forward / backward data: before the shards; backward weights: the
  // blocked partial gradients are summed, then reordered once) for every
  // shard whose primitive chose the same blocking.
  ThreadState& self = State();
  PDK_ASSIGN_OR_RETURN(Entry* e0, self.Get(key(0)));
  const bool share = shards > 1 && e0->reorder != nullptr;
  if (share && !bw) PDK_RETURN_IF_ERROR(self.Reorder(e0, const_cast<float*>(b), e0->wbuf.get()));
  // Backward weights: shards 1.. write partial gradients (blocked or plain).
  const int64_t pstride = std::max(wsize, e0->blocked_floats);
  std::unique_ptr<float[]> partials(bw ? new float[(shards - 1) * pstride] : nullptr);
  std::vector<char> blocked_partial(shards, 0);
  std::vector<pdk::Status> status(shards);
  RunShards(dev, shards, [&](int64_t i) {
    // Any thread may run any shard: each uses the primitive of its own cache.
    ThreadState& st = State();
    pdk::StatusOr<Entry*> got = st.Get(key(i));
    if (!got.ok()) {
      status[i] = got.status();
      return;
    }
    Entry* e = *got;
    const bool shared = share && e->SameBlocking(*e0);
    const Slice& sl = slices[i];
    if (bw) {
      float* dst = i == 0 ? out : partials.get() + (i - 1) * pstride;
      float* wblk = !shared ? nullptr : i == 0 ? e0->wbuf.get() : dst;
      blocked_partial[i] = shared;
      status[i] = st.Exec(e, a + sl.a_off, b + sl.out_off, dst, wblk);
    } else {
      status[i] = st.Exec(e, a + sl.a_off, b, out + sl.out_off, shared ? e0->wbuf.get() : nullptr);
    }
  });
  for (const auto& st : status) PDK_RETURN_IF_ERROR(st);
  if (bw) {
    using Vec = Eigen::Array<float, Eigen::Dynamic, 1>;
    if (share) {  // blocked partials into shard 0's blocked gradient, reordered once
      Eigen::Map<Vec> blk(e0->wbuf.get(), e0->blocked_floats);
      for (int64_t i = 1; i < shards; ++i)
        if (blocked_partial[i])
          blk += Eigen::Map<const Vec>(partials.get() + (i - 1) * pstride, e0->blocked_floats);
      PDK_RETURN_IF_ERROR(self.Reorder(e0, out, e0->wbuf.get()));
    }
    Eigen::Map<Vec> total(out, wsize);
    for (int64_t i = 1; i < shards; ++i)
      if (!blocked_partial[i])
        total += Eigen::Map<const Vec>(partials.get() + (i - 1) * pstride, wsize);
  }
  return pdk::Status::OK();
}

}  // namespace pdk_compute
