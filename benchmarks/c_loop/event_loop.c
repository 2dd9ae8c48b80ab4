/* A C port of mrfq's packet event loop (mrfq/packet/kernel.py, _make_event_loop), used only by
 * benchmarks/bench_c_loop.py as a speed yardstick: same state arrays, same algorithm, same
 * floating-point operations, so its completion times must equal the Numba kernel's bit
 * for bit. Covered: policies PF, BMF and memoryless DRFQ (both virtual-time clocks, SPEC §3),
 * no round-trip times, one packet type per class, no class weights, no debug checks
 * (bench_c_loop.py refuses other models). Not ported: the per-packet sojourn histogram.
 * Build: cc -O3 -shared -fPIC.
 */
#include <math.h>
#include <stdint.h>

typedef int64_t i64;

enum { DRFQ, DRFQ_DOVETAIL, PF, BMF };
enum { DONE, BUDGET, NEED_ARRIVALS, NEED_CAPACITY };
enum { I_NEXT_ARRIVAL, I_OUTSTANDING, I_SEQ, I_SERVICES, I_EVENTS, I_ACTIVE, I_FREE_TOP };
enum { F_TIME, F_VGLOBAL, F_BOUND };  /* F_BOUND: a scratch slot (MR3's, unused by DRFQ) */
/* DRFQ's clock: 0 started (BR), 1 in service (the DRFQ paper); BOOKKEEPING: BR's tags, with
 * the in-service clock's work done alongside (the tag stored at every start, the bound,
 * the scan of the resources when an injecting flow lags it), so that timing it against
 * the started loop prices that work on one schedule (issue 22) */
enum { BOOKKEEPING = 2 };
enum { FI_CLASS, FI_INDEX, FI_TO_INJECT, FI_IN_SYSTEM, FI_SENT, FI_PENDING, FI_FREE_N,
       FI_TYPE0, FI_NTYPES, FI_HELD, FI_NEXT, FI_SOJOURN, FI_FREE_HEAD, FI_RES };
#define SLOT_BITS 20
#define SLOT_MASK ((i64)((1 << SLOT_BITS) - 1))

/* Python's max(a, b), as the Numba kernel computes it */
static inline double pymax(double a, double b) { return b > a ? b : a; }

typedef struct {
    i64 ni, nf, o_free, o_type, o_fifo_pk, o_fifo_id, o_key, o_fifo_key, o_fifo_s;
} layout_t;

/* memoryless DRFQ's virtual time at an injection whose flow's previous packet finishes at
 * tag `finish` (kernel._virtual_time): started clock, vglobal (the largest tag ever
 * started); in-service clock, the largest tag among the packets in service, with none in
 * service the tag of the packet served at the resource that completed last (equal times:
 * the highest index); vglobal is then an upper bound that spares the scan */
static inline double virtual_time(const double *res_f, i64 J, double vglobal, int in_service,
                                  double finish)
{
    if (!in_service || finish >= vglobal) return vglobal;
    double v = -INFINITY;
    for (i64 j = 0; j < J; j++)
        if (res_f[j] < INFINITY && res_f[J + j] > v) v = res_f[J + j];
    if (v == -INFINITY) {
        i64 last = 0;
        for (i64 j = 1; j < J; j++)
            if (res_f[4 * J + j] >= res_f[4 * J + last]) last = j;
        v = res_f[J + last];
    }
    return v;
}

static inline void heap_push(double *hk, i64 *hid_, i64 n, i64 J, i64 j, double key, i64 hid)
{
    i64 i = n;
    while (i > 0) {
        i64 parent = (i - 1) >> 1, at = parent * J + j;
        double pkey = hk[at];
        if (key < pkey || (key == pkey && hid < hid_[at])) {
            hk[i * J + j] = pkey;
            hid_[i * J + j] = hid_[at];
            i = parent;
        } else {
            break;
        }
    }
    hk[i * J + j] = key;
    hid_[i * J + j] = hid;
}

static inline void sift_down(double *hk, i64 *hid_, i64 n, i64 J, i64 j, double key, i64 hid)
{
    i64 i = 0;
    for (;;) {
        i64 child = 2 * i + 1;
        if (child >= n) break;
        i64 at = child * J + j;
        double ckey = hk[at];
        i64 cid = hid_[at];
        if (child + 1 < n) {
            double key2 = hk[at + J];
            i64 id2 = hid_[at + J];
            if (key2 < ckey || (key2 == ckey && id2 < cid)) {
                child += 1;
                ckey = key2;
                cid = id2;
            }
        }
        if (ckey < key || (ckey == key && cid < hid)) {
            hk[i * J + j] = ckey;
            hid_[i * J + j] = cid;
            i = child;
        } else {
            break;
        }
    }
    hk[i * J + j] = key;
    hid_[i * J + j] = hid;
}

/* inject the flow's next packet: returns its packet number; *dest, *s its first resource */
static inline i64 inject(int policy, int in_service, i64 *fi, double *ff, const layout_t *L,
                         const double *service, const i64 *first_resource,
                         const double *type_charge, const double *res_f, double *vglobal,
                         double *bound, i64 J, i64 *dest, double *s)
{
    i64 number = fi[FI_SENT];
    fi[FI_SENT] = number + 1;
    fi[FI_TO_INJECT] -= 1;
    fi[FI_IN_SYSTEM] += 1;
    i64 ptype = fi[FI_TYPE0];
    i64 n_free = fi[FI_FREE_N] - 1;
    fi[FI_FREE_N] = n_free;
    i64 pk = fi[L->o_free + n_free];
    fi[L->o_type + pk] = ptype;
    if (policy == DRFQ && in_service == BOOKKEEPING) {
        /* the in-service clock's work, its result kept (bound) but the tag BR's */
        *bound = virtual_time(res_f, J, *bound, 1, ff[0]);
    }
    if (policy == DRFQ) {
        double v = virtual_time(res_f, J, *vglobal, in_service == 1, ff[0]);
        if (in_service == 1) *vglobal = v;
        double key = pymax(v, ff[0]);
        ff[0] = key + type_charge[ptype];
        ff[L->o_key + pk] = key;
    }
    *dest = first_resource[ptype];
    *s = service[ptype * J + *dest];
    return pk;
}

/* resource j (idle) starts packet pk of the flow whose int record is fi, with tag key */
static inline void begin_service(int policy, int in_service, double *vglobal, double *bound,
                                 const i64 *fi,
                                 i64 *res_i, double *res_f, const double *service,
                                 const i64 *next_resource, i64 J, const layout_t *L, i64 j,
                                 double t, i64 slot, i64 pk, double s, double key)
{
    res_f[j] = t + s;
    res_i[j] = slot;
    res_i[J + j] = pk;
    if (policy == DRFQ) {
        if (in_service) res_f[J + j] = key;  /* (BOOKKEEPING too) */
        if (key > *vglobal) *vglobal = key;
        if (in_service == BOOKKEEPING && key > *bound) *bound = key;
    } else {
        res_f[J + j] = key;
    }
    i64 ptype = fi[L->o_type + pk];
    i64 nxt_res = next_resource[ptype * J + j];
    res_i[2 * J + j] = nxt_res;
    if (nxt_res >= 0) res_f[3 * J + j] = service[ptype * J + nxt_res];
}

static inline void arrive(int policy, int in_service, double *vglobal, double *bound, i64 *fi,
                          double *ff,
                          i64 *res_i, double *res_f, double *hk, i64 *hid_,
                          const double *service, const i64 *next_resource, i64 J, i64 W,
                          const layout_t *L, i64 slot, i64 pk, i64 dest, double s, i64 seq,
                          double t)
{
    i64 *at = fi + FI_RES + 3 * dest;
    i64 queued = at[0] + 1;
    at[0] = queued;
    double key;
    if (policy == BMF) {
        key = pymax(res_f[J + dest], ff[dest] + s);
        ff[dest] = key;
    } else if (policy == PF) {
        key = pymax(res_f[J + dest], ff[dest] + s / (double)queued);
        ff[dest] = key;
    } else {  /* memoryless DRFQ: the tag given at injection */
        key = ff[L->o_key + pk];
    }
    i64 hid = (seq << SLOT_BITS) | slot;
    if (res_f[dest] == INFINITY && res_i[3 * J + dest] == 0) {
        /* idle with nothing waiting: phase 2 would start this packet; a busy period
         * begins (idle since the last completion) */
        res_f[2 * J + dest] += t - res_f[4 * J + dest];
        begin_service(policy, in_service, vglobal, bound, fi, res_i, res_f, service,
                      next_resource, J, L, dest, t, slot, pk, s, key);
        return;
    }
    i64 n = at[2];
    i64 pos = at[1] + n;
    if (pos >= W) pos -= W;
    i64 entry = dest * W + pos;
    fi[L->o_fifo_pk + entry] = pk;
    fi[L->o_fifo_id + entry] = hid;
    ff[L->o_fifo_key + entry] = key;
    ff[L->o_fifo_s + entry] = s;
    at[2] = n + 1;
    if (n == 0) {
        i64 size_at = res_i[3 * J + dest];
        heap_push(hk, hid_, size_at, J, dest, key, hid);
        res_i[3 * J + dest] = size_at + 1;
    }
}

static inline int event_loop(int policy, i64 budget, const double *service,
                             const i64 *next_resource, const i64 *first_resource,
                             const i64 *class_type0, const i64 *class_ntypes, i64 W,
                             const double *arr_time, const i64 *arr_class,
                             const i64 *arr_size, i64 n_arrivals, i64 flows,
                             double *completion, i64 *istate, double *fstate,
                             i64 *free_slots, i64 *flow_i, double *flow_f, i64 *res_i,
                             double *res_f, double *heap_key, i64 *heap_id, i64 J,
                             const i64 *lay, const double *type_charge, int in_service)
{
    layout_t L = {lay[0], lay[1], lay[2], lay[3], lay[4], lay[5], lay[6], lay[8], lay[9]};
    double vglobal = fstate[F_VGLOBAL];
    double bound = fstate[F_BOUND];
    const i64 ni = L.ni, nf = L.nf;
    double t = fstate[F_TIME];
    i64 nxt = istate[I_NEXT_ARRIVAL], outstanding = istate[I_OUTSTANDING];
    i64 seq = istate[I_SEQ], services = istate[I_SERVICES], active = istate[I_ACTIVE];
    i64 free_top = istate[I_FREE_TOP];
    double t_arrival = nxt < n_arrivals ? arr_time[nxt] : INFINITY;
    i64 events = 0;
    int status = BUDGET;
    while (events < budget) {
        if (outstanding == 0) { status = DONE; break; }
        if (nxt >= n_arrivals) { status = NEED_ARRIVALS; break; }
        double best_t = t_arrival;
        int kind = 2;
        i64 which = 0;
        for (i64 j = 0; j < J; j++) {
            double d = res_f[j];
            if (d < best_t || (d == best_t && kind == 2)) {
                best_t = d;
                kind = 0;
                which = j;
            }
        }
        if (best_t == INFINITY) { status = NEED_ARRIVALS; break; }
        if (kind == 2 && free_top == 0) { status = NEED_CAPACITY; break; }
        t = best_t;
        events += 1;
        if (kind == 0) {
            i64 done = which;
            i64 slot = res_i[done], pk = res_i[J + done], target = res_i[2 * J + done];
            double s = res_f[3 * J + done];
            res_f[done] = INFINITY;
            res_f[4 * J + done] = t;  /* idle from now unless it starts another packet */
            services += 1;
            i64 *fi = flow_i + slot * ni;
            double *ff = flow_f + slot * nf;
            fi[FI_RES + 3 * done] -= 1;
            if (target >= 0) {
                arrive(policy, in_service, &vglobal, &bound, fi, ff, res_i, res_f, heap_key, heap_id,
                       service, next_resource, J, W, &L, slot, pk, target, s, seq, t);
                seq += 1;
            } else {
                fi[FI_IN_SYSTEM] -= 1;
                i64 n_free = fi[FI_FREE_N];
                fi[L.o_free + n_free] = pk;
                fi[FI_FREE_N] = n_free + 1;
                if (fi[FI_TO_INJECT] > fi[FI_PENDING]) {
                    i64 dest;
                    pk = inject(policy, in_service, fi, ff, &L, service, first_resource,
                                type_charge, res_f, &vglobal, &bound, J, &dest, &s);
                    arrive(policy, in_service, &vglobal, &bound, fi, ff, res_i, res_f, heap_key,
                           heap_id, service, next_resource, J, W, &L, slot, pk, dest, s, seq,
                           t);
                    seq += 1;
                } else if (fi[FI_IN_SYSTEM] == 0 && fi[FI_PENDING] == 0) {
                    i64 index = fi[FI_INDEX];
                    if (index < flows) {
                        completion[index] = t;
                        outstanding -= 1;
                    }
                    free_slots[free_top] = slot;
                    free_top += 1;
                    active -= 1;
                }
            }
        } else {
            free_top -= 1;
            i64 slot = free_slots[free_top];
            active += 1;
            i64 k = arr_class[nxt], size = arr_size[nxt];
            i64 *fi = flow_i + slot * ni;
            double *ff = flow_f + slot * nf;
            fi[FI_CLASS] = k;
            fi[FI_INDEX] = nxt;
            fi[FI_TO_INJECT] = size;
            fi[FI_IN_SYSTEM] = 0;
            fi[FI_SENT] = 0;
            fi[FI_PENDING] = 0;
            fi[FI_FREE_N] = W;
            fi[FI_TYPE0] = class_type0[k];
            fi[FI_NTYPES] = class_ntypes[k];
            for (i64 p = 0; p < W; p++) fi[L.o_free + p] = W - 1 - p;
            for (i64 j = 0; j < J; j++) {
                fi[FI_RES + 3 * j] = 0;
                fi[FI_RES + 3 * j + 1] = 0;
                fi[FI_RES + 3 * j + 2] = 0;
                ff[j] = -INFINITY;
                ff[J + j] = -INFINITY;
            }
            i64 n_inject = W < size ? W : size;
            for (i64 q = 0; q < n_inject; q++) {
                i64 dest;
                double s;
                i64 pk = inject(policy, in_service, fi, ff, &L, service, first_resource,
                                type_charge, res_f, &vglobal, &bound, J, &dest, &s);
                arrive(policy, in_service, &vglobal, &bound, fi, ff, res_i, res_f, heap_key, heap_id,
                       service, next_resource, J, W, &L, slot, pk, dest, s, seq, t);
                seq += 1;
            }
            nxt += 1;
            t_arrival = nxt < n_arrivals ? arr_time[nxt] : INFINITY;
        }
        for (i64 j = 0; j < J; j++) {
            i64 n_heap = res_i[3 * J + j];
            if (res_f[j] < INFINITY || n_heap == 0) continue;
            double key = heap_key[j];
            i64 top_id = heap_id[j];
            i64 sl = top_id & SLOT_MASK;
            i64 *fi = flow_i + sl * ni;
            double *ff = flow_f + sl * nf;
            i64 *at = fi + FI_RES + 3 * j;
            i64 head = at[1];
            i64 entry = j * W + head;
            i64 p = fi[L.o_fifo_pk + entry];
            double s = ff[L.o_fifo_s + entry];
            begin_service(policy, in_service, &vglobal, &bound, fi, res_i, res_f, service,
                          next_resource, J, &L, j, t, sl, p, s, key);
            head += 1;
            if (head == W) head = 0;
            at[1] = head;
            i64 remaining = at[2] - 1;
            at[2] = remaining;
            if (remaining > 0) {
                entry = j * W + head;
                sift_down(heap_key, heap_id, n_heap, J, j, ff[L.o_fifo_key + entry],
                          fi[L.o_fifo_id + entry]);
            } else {
                n_heap -= 1;
                res_i[3 * J + j] = n_heap;
                if (n_heap > 0) {
                    i64 last = n_heap * J + j;
                    sift_down(heap_key, heap_id, n_heap, J, j, heap_key[last], heap_id[last]);
                }
            }
        }
    }
    fstate[F_TIME] = t;
    fstate[F_VGLOBAL] = vglobal;
    if (in_service == BOOKKEEPING) fstate[F_BOUND] = bound;
    istate[I_NEXT_ARRIVAL] = nxt;
    istate[I_OUTSTANDING] = outstanding;
    istate[I_SEQ] = seq;
    istate[I_SERVICES] = services;
    istate[I_EVENTS] += events;
    istate[I_ACTIVE] = active;
    istate[I_FREE_TOP] = free_top;
    return status;
}

#define EXPORT(name, POLICY, IN_SERVICE)                                                      \
    int name(i64 budget, const double *service, const i64 *next_resource,                     \
             const i64 *first_resource, const i64 *class_type0, const i64 *class_ntypes,       \
             i64 W, const double *arr_time, const i64 *arr_class, const i64 *arr_size,         \
             i64 n_arrivals, i64 flows, double *completion, i64 *istate, double *fstate,       \
             i64 *free_slots, i64 *flow_i, double *flow_f, i64 *res_i, double *res_f,          \
             double *heap_key, i64 *heap_id, i64 J, const i64 *layout,                         \
             const double *type_charge)                                                       \
    {                                                                                         \
        return event_loop(POLICY, budget, service, next_resource, first_resource,            \
                          class_type0, class_ntypes, W, arr_time, arr_class, arr_size,        \
                          n_arrivals, flows, completion, istate, fstate, free_slots, flow_i,  \
                          flow_f, res_i, res_f, heap_key, heap_id, J, layout, type_charge,    \
                          IN_SERVICE);                                                        \
    }

EXPORT(mrfq_loop_bmf, BMF, 0)
EXPORT(mrfq_loop_pf, PF, 0)
EXPORT(mrfq_loop_drfq, DRFQ, 1)
EXPORT(mrfq_loop_drfq_started, DRFQ, 0)
EXPORT(mrfq_loop_drfq_bookkeeping, DRFQ, BOOKKEEPING)
