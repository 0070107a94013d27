/*
 * The simplifier's compiled kernel: the anchored priority Douglas-Peucker search and the reading
 * of a list of positions, for tools/geometry (docs/adr/0037-compiled-simplifier-kernel.md).
 *
 * search(z, anchor_end, init, pops, kept, seg_err) -> count
 *     The search of douglas_peucker.priority_dp on a path already projected per anchor span
 *     (z: n complex values as 2n float64; anchor_end: the end of each anchor span projected for
 *     that span), run as the rule states it: a priority queue of segments, the one whose farthest
 *     vertex is farthest popped first (ties: the segment that starts first), until `pops` vertices
 *     were added or no vertex is off its segment. Writes the sorted kept indices into `kept`
 *     (int64) and each kept segment's error into `seg_err` (float64); returns how many were kept.
 *
 *     A vertex's distance is computed with the float operations numpy uses for
 *     douglas_peucker.priority_dp_reference: the chord inverted by Smith's division, the vertex
 *     turned by a complex multiply whose real part fuses the product of the real parts, the
 *     absolute value as larger * sqrt(fma(ratio, ratio, 1)). Every fused multiply-add is an
 *     explicit fma() (exact by definition, on any CPU), and no other contraction is allowed,
 *     so the kernel and numpy agree to the bit wherever numpy's loops use fused multiply-adds
 *     (x86-64 with AVX2 or AVX-512, arm64); tests/geometry/test_kernel.py pins that.
 *
 * gaps(lon, lat, out)
 *     error_bound.gc_gap_m in one pass: for each segment of the path (lon, lat), a bound in metres
 *     on the distance between its straight lon/lat line and its great-circle arc, into out.
 *
 * vertex_bounds(lon, lat, kept, rlon, rlat, segs, gap, cut, out)
 *     error_bound._vertex_bounds_m in one pass, for each kept segment in segs.
 *
 *     Both use the C library's trigonometry where numpy uses its own, so their bounds may differ
 *     from numpy's in the last bits; each is an upper bound with the same proof, and the bound
 *     reported is rounded up to whole metres after a micrometre of slack (error_bound.whole_metres).
 *
 * read_positions(list) -> (bytearray, width, valid) or None
 *     A list (or tuple) whose members are all lists or tuples of 2 (or all of 3) exact floats or
 *     ints, as float64 values in a bytearray, row by row, and whether every longitude is within
 *     [-180, 180], every latitude within [-90, 90] and every altitude finite; None for anything
 *     else (a bool, a float subclass, mixed widths, an int too large for a float), which
 *     positions.py reads and checks value by value.
 */
/* The stable ABI of CPython 3.12 (PEP 384): one build serves every later CPython, so a release
 * needs one wheel per platform, not one per Python version. Lists and tuples are read through
 * functions (PyList_GetItem, PyTuple_GetItem), not the macros that reach into their structs. */
#define Py_LIMITED_API 0x030C0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* The distance loop is built twice on x86-64 Linux, with and without FMA instructions, and the
 * loader picks one for the CPU (fma() is exact either way; without the instruction it is a call). */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__linux__) && !defined(__clang__)
#define KERNEL_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define KERNEL_CLONES
#endif

#define TINY_DEG 1e-12 /* a planar distance below this (0.1 micrometre) counts as 0 */
#define SHORT 128      /* segments of fewer vertices are measured in one pass, longer ones in two */

/* numpy's absolute value of a complex number (its SIMD loop): larger * sqrt(ratio^2 + 1). */
static inline double np_cabs(double re, double im) {
    double x = fabs(re), y = fabs(im);
    double larger = x > y ? x : y, smaller = x > y ? y : x;
    double ratio = smaller / (larger == 0.0 ? 1.0 : larger); /* 0 when both are */
    return sqrt(fma(ratio, ratio, 1.0)) * larger;
}

/* The distance of w (a vertex less the segment's start) from the segment whose inverse is inv:
 * w turned by inv (numpy's complex multiply), its projection parameter clamped to [0, upper]. */
static inline double distance(double w_re, double w_im, double inv_re, double inv_im, double upper) {
    double m_re = fma(w_re, inv_re, -(w_im * inv_im));
    double m_im = fma(w_re, inv_im, w_im * inv_re);
    double t = m_re > 0.0 ? m_re : 0.0;
    t = t < upper ? t : upper;
    return np_cabs(m_re - t, m_im);
}

typedef struct {
    double dist;     /* the farthest vertex's distance, > 0 */
    double end_re;   /* the segment's end, projected as its start is */
    double end_im;
    int64_t s, e;    /* the segment, s -> e */
    int64_t far;     /* its farthest vertex */
} Node;

/* The farthest vertex of [s, e) from the segment z[s] -> end: its index and distance, as numpy
 * computes them (the first of equal distances; s itself, at 0, when none is off the segment). */
KERNEL_CLONES
static double farthest(const double *restrict z, int64_t s, int64_t e, double end_re, double end_im, double *restrict q,
                       int64_t *far) {
    const double a_re = z[2 * s], a_im = z[2 * s + 1];
    const double c_re = end_re - a_re, c_im = end_im - a_im;
    double length = np_cabs(c_re, c_im);
    double inv_re, inv_im, upper;
    if (length > 0.0) {
        upper = 1.0;
        /* 1 / chord, numpy's (Smith's) complex division with dividend 1 + 0i */
        if (fabs(c_re) >= fabs(c_im)) {
            double rat = c_im / c_re, scl = 1.0 / (c_re + c_im * rat);
            inv_re = (1.0 + 0.0 * rat) * scl;
            inv_im = (0.0 - 1.0 * rat) * scl;
        } else {
            double rat = c_re / c_im, scl = 1.0 / (c_im + c_re * rat);
            inv_re = (1.0 * rat + 0.0) * scl;
            inv_im = (0.0 * rat - 1.0) * scl;
        }
    } else { /* a zero-length chord: the distance is to its start */
        upper = 0.0;
        length = 1.0;
        inv_re = 1.0;
        inv_im = 0.0;
    }
    const int64_t count = e - s;
    const double *zs = z + 2 * s;
    double top = -1.0;
    int64_t best = 0;
    if (count < SHORT) { /* one pass */
        for (int64_t k = 0; k < count; k++) {
            double d = distance(zs[2 * k] - a_re, zs[2 * k + 1] - a_im, inv_re, inv_im, upper);
            if (d > top) {
                top = d;
                best = k;
            }
        }
    } else { /* every distance in a loop the compiler vectorises, then the first largest */
        for (int64_t k = 0; k < count; k++)
            q[k] = distance(zs[2 * k] - a_re, zs[2 * k + 1] - a_im, inv_re, inv_im, upper);
        for (int64_t k = 0; k < count; k++)
            top = q[k] > top ? q[k] : top;
        while (q[best] != top)
            best++;
    }
    best += s;
    *far = best;
    double dist = top * length;
    return dist < TINY_DEG ? 0.0 : dist;
}

/* Heap order: the larger distance first; on equal distances the segment that starts first. */
static inline int before(const Node *a, const Node *b) {
    return a->dist > b->dist || (a->dist == b->dist && a->s < b->s);
}

static void heap_push(Node *heap, Py_ssize_t *size, Node node) {
    Py_ssize_t i = (*size)++;
    while (i > 0) {
        Py_ssize_t up = (i - 1) / 2;
        if (!before(&node, &heap[up]))
            break;
        heap[i] = heap[up];
        i = up;
    }
    heap[i] = node;
}

static Node heap_pop(Node *heap, Py_ssize_t *size) {
    Node top = heap[0], last = heap[--(*size)];
    Py_ssize_t i = 0, n = *size;
    for (;;) {
        Py_ssize_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && before(&heap[child + 1], &heap[child]))
            child++;
        if (!before(&heap[child], &last))
            break;
        heap[i] = heap[child];
        i = child;
    }
    if (n)
        heap[i] = last;
    return top;
}

/* Push segment s -> e (its end projected as end_re, end_im) if a vertex lies off it. */
static void consider(const double *z, double *q, Node *heap, Py_ssize_t *size, int64_t s, int64_t e, double end_re,
                     double end_im) {
    if (e - s < 2)
        return;
    Node node = {0.0, end_re, end_im, s, e, s};
    node.dist = farthest(z, s, e, end_re, end_im, q, &node.far);
    if (node.dist > 0.0)
        heap_push(heap, size, node);
}

static int compare_int64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The position of value in the sorted array (it is there). */
static Py_ssize_t position(const int64_t *sorted, Py_ssize_t count, int64_t value) {
    Py_ssize_t lo = 0, hi = count - 1;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void release_buffers(Py_buffer *views, int count) {
    while (count-- > 0)
        PyBuffer_Release(&views[count]);
}

/* What a function reads or writes through the buffer protocol: C-contiguous items of a size. */
typedef struct {
    const char *name;
    Py_ssize_t itemsize;
    int writable;
} Arg;

/* Every buffer of `args`, or none: on an error the ones already taken are given back. */
static int get_buffers(PyObject *const *objects, const Arg *args, Py_buffer *views, int count) {
    for (int i = 0; i < count; i++) {
        int flags = PyBUF_C_CONTIGUOUS | (args[i].writable ? PyBUF_WRITABLE : 0);
        if (PyObject_GetBuffer(objects[i], &views[i], flags) < 0) {
            release_buffers(views, i);
            return -1;
        }
        if (views[i].len % args[i].itemsize) {
            PyErr_Format(PyExc_ValueError, "%s: a buffer of %zd-byte items expected", args[i].name, args[i].itemsize);
            release_buffers(views, i + 1);
            return -1;
        }
    }
    return 0;
}

/* Whether the count indices are increasing and within [0, n). */
static int increasing_within(const int64_t *indices, Py_ssize_t count, Py_ssize_t n) {
    for (Py_ssize_t j = 0; j < count; j++)
        if (indices[j] < 0 || indices[j] >= n || (j && indices[j] <= indices[j - 1]))
            return 0;
    return 1;
}

static PyObject *search(PyObject *module, PyObject *args) {
    static const Arg spec[5] = {{"z", 16, 0}, {"anchor_end", 16, 0}, {"init", 8, 0}, {"kept", 8, 1}, {"seg_err", 8, 1}};
    PyObject *objs[5], *result = NULL;
    Py_ssize_t pops;
    if (!PyArg_ParseTuple(args, "OOOnOO:search", &objs[0], &objs[1], &objs[2], &pops, &objs[3], &objs[4]))
        return NULL;
    Py_buffer b[5];
    if (get_buffers(objs, spec, b, 5) < 0)
        return NULL;
    Py_buffer zb = b[0], endb = b[1], initb = b[2], keptb = b[3], errb = b[4];
    const double *z = zb.buf, *anchor_end = endb.buf;
    const int64_t *init = initb.buf;
    int64_t *kept = keptb.buf;
    double *seg_err = errb.buf;
    Py_ssize_t n = zb.len / 16, m = initb.len / 8, capacity = keptb.len / 8;
    if (pops < 0)
        pops = 0;
    if (m < 2 || endb.len / 16 != m - 1 || capacity < m + pops || errb.len / 8 < capacity - 1) {
        PyErr_SetString(PyExc_ValueError, "search: inconsistent array sizes");
        goto release_all;
    }
    if (!increasing_within(init, m, n)) {
        PyErr_SetString(PyExc_ValueError, "search: init must be increasing indices of z");
        goto release_all;
    }
    /* Allocated and freed with the GIL held (the stable ABI has no raw allocator). */
    Node *heap = PyMem_Malloc(sizeof(Node) * (size_t)(m + 2 * pops));
    double *q = PyMem_Malloc(sizeof(double) * (size_t)n); /* a segment's distances */
    if (!heap || !q) {
        PyMem_Free(heap);
        PyMem_Free(q);
        PyErr_NoMemory();
        goto release_all;
    }
    Py_ssize_t size = 0, count = m;
    Py_BEGIN_ALLOW_THREADS
    memcpy(kept, init, sizeof(int64_t) * (size_t)m);
    for (Py_ssize_t j = 0; j + 1 < m; j++)
        consider(z, q, heap, &size, init[j], init[j + 1], anchor_end[2 * j], anchor_end[2 * j + 1]);
    for (Py_ssize_t popped = 0; popped < pops && size; popped++) {
        Node node = heap_pop(heap, &size);
        kept[count++] = node.far;
        consider(z, q, heap, &size, node.s, node.far, z[2 * node.far], z[2 * node.far + 1]);
        consider(z, q, heap, &size, node.far, node.e, node.end_re, node.end_im);
    }
    qsort(kept, (size_t)count, sizeof(int64_t), compare_int64);
    memset(seg_err, 0, sizeof(double) * (size_t)(count - 1));
    for (Py_ssize_t i = 0; i < size; i++)
        seg_err[position(kept, count, heap[i].s)] = heap[i].dist;
    Py_END_ALLOW_THREADS
    PyMem_Free(heap);
    PyMem_Free(q);
    result = PyLong_FromSsize_t(count);
release_all:
    release_buffers(b, 5);
    return result;
}

#define EARTH_RADIUS_M 6371008.8
#define DEG (M_PI / 180.0)
#define M_PER_DEG (EARTH_RADIUS_M * DEG)
#define HALF_CIRCLE_M (EARTH_RADIUS_M * M_PI)

typedef struct {
    double x, y, z;
} Vec;

static inline Vec unit(double lon, double lat) {
    double lam = lon * DEG, phi = lat * DEG;
    Vec v = {cos(phi) * cos(lam), cos(phi) * sin(lam), sin(phi)};
    return v;
}

static inline Vec cross3(Vec p, Vec q) {
    Vec v = {p.y * q.z - p.z * q.y, p.z * q.x - p.x * q.z, p.x * q.y - p.y * q.x};
    return v;
}

static inline double dot3(Vec p, Vec q) { return p.x * q.x + p.y * q.y + p.z * q.z; }

static inline double norm3(Vec p) { return sqrt(dot3(p, p)); }

static inline double angle3(Vec p, Vec q) { return atan2(norm3(cross3(p, q)), dot3(p, q)); }

/* The largest cosine of a latitude within [low, high] (degrees). */
static inline double max_cos(double low, double high) {
    double nearest = low > 0.0 ? low : 0.0;
    return cos((nearest < high ? nearest : high) * DEG);
}

/* sphere.arc_distance_m for one point: metres from p to the arc a -> b (its end when it has no length). */
static double arc_distance(double plon, double plat, double alon, double alat, double blon, double blat) {
    Vec p = unit(plon, plat), u = unit(alon, alat), v = unit(blon, blat);
    Vec pole = cross3(u, v);
    double norm = norm3(pole);
    if (norm > 0 && dot3(cross3(u, p), pole) >= 0 && dot3(cross3(p, v), pole) >= 0) {
        double across = fabs(dot3(p, pole)) / norm;
        return asin(across < 1.0 ? across : 1.0) * EARTH_RADIUS_M;
    }
    double to_a = angle3(p, u), to_b = angle3(p, v);
    return (to_a < to_b ? to_a : to_b) * EARTH_RADIUS_M;
}

/* error_bound.gc_gap_m for the segment p -> q (degrees; u, v their unit vectors). */
static double gap_m(double lon0, double lat0, Vec u, double lon1, double lat1, Vec v) {
    double dlon = fabs(lon1 - lon0) * DEG, dphi = fabs(lat1 - lat0) * DEG;
    if (dlon == 0.0)
        return 0.0;
    Vec pole = cross3(u, v);
    double sin_theta = norm3(pole);
    double sum = dphi * dphi + dlon * dlon;
    if (!(sum < 8.0 && sin_theta >= (dphi + dlon) * (dphi + dlon) / 2 && sin_theta > 0.0))
        return HALF_CIRCLE_M;
    pole.x /= sin_theta, pole.y /= sin_theta, pole.z /= sin_theta;
    double sin_max = fabs(u.z) > fabs(v.z) ? fabs(u.z) : fabs(v.z); /* sin of the larger |latitude| */
    double curve = 2 * dphi * dlon * hypot(pole.x, pole.y) + dlon * dlon * fabs(pole.z);
    double f_max = sin_max * curve / (8 - dphi * dphi - dlon * dlon);
    return asin(f_max < 0.0 ? 0.0 : f_max > 1.0 ? 1.0 : f_max) * EARTH_RADIUS_M;
}

static PyObject *gaps(PyObject *module, PyObject *args) {
    static const Arg spec[3] = {{"lon", 8, 0}, {"lat", 8, 0}, {"out", 8, 1}};
    PyObject *objs[3], *result = NULL;
    if (!PyArg_ParseTuple(args, "OOO:gaps", &objs[0], &objs[1], &objs[2]))
        return NULL;
    Py_buffer b[3];
    if (get_buffers(objs, spec, b, 3) < 0)
        return NULL;
    Py_buffer lonb = b[0], latb = b[1], outb = b[2];
    Py_ssize_t n = lonb.len / 8;
    if (latb.len != lonb.len || n < 1 || outb.len / 8 != n - 1) {
        PyErr_SetString(PyExc_ValueError, "gaps: inconsistent array sizes");
        goto release_all;
    }
    const double *lon = lonb.buf, *lat = latb.buf;
    double *out = outb.buf;
    Py_BEGIN_ALLOW_THREADS
    Vec u = unit(lon[0], lat[0]);
    for (Py_ssize_t j = 0; j + 1 < n; j++) {
        Vec v = unit(lon[j + 1], lat[j + 1]);
        out[j] = gap_m(lon[j], lat[j], u, lon[j + 1], lat[j + 1], v);
        u = v;
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
release_all:
    release_buffers(b, 3);
    return result;
}

/* error_bound._vertex_bounds_m for one kept segment j: the vertices between kept[j] and
 * kept[j + 1] against the rounded segment (rlon, rlat)[j] -> [j + 1], whose gap is given. */
static double vertex_bound(const double *lon, const double *lat, int64_t a, int64_t b, double alon, double alat,
                           double blon, double blat, double gap, double cut) {
    double low = alat < blat ? alat : blat, high = alat < blat ? blat : alat;
    for (int64_t i = a + 1; i < b; i++) {
        low = lat[i] < low ? lat[i] : low;
        high = lat[i] > high ? lat[i] : high;
    }
    double kx = max_cos(low, high);
    double c_re = (blon - alon) * kx, c_im = blat - alat;
    double length = hypot(c_re, c_im);
    double inv_re = 1.0, inv_im = 0.0, upper = 0.0, scale = M_PER_DEG;
    if (length > 0.0) { /* otherwise the distance is to the start */
        inv_re = c_re / (length * length), inv_im = -c_im / (length * length);
        upper = 1.0, scale = length * M_PER_DEG;
    }
    double worst = 0.0;
    for (int64_t i = a + 1; i < b; i++) {
        double w_re = (lon[i] - alon) * kx, w_im = lat[i] - alat;
        double m_re = w_re * inv_re - w_im * inv_im, m_im = w_re * inv_im + w_im * inv_re;
        double t = m_re > 0.0 ? m_re : 0.0;
        t = t < upper ? t : upper;
        double planar = hypot(m_re - t, m_im) * scale;
        double arc = planar + (gap < HALF_CIRCLE_M ? 4 * t * (1 - t) : 1.0) * gap;
        if (arc > cut) {
            double exact = arc_distance(lon[i], lat[i], alon, alat, blon, blat);
            arc = exact < arc ? exact : arc;
            arc = planar > arc ? planar : arc;
        }
        worst = arc > worst ? arc : worst;
    }
    return worst;
}

static PyObject *vertex_bounds(PyObject *module, PyObject *args) {
    PyObject *objs[8], *result = NULL;
    double cut;
    if (!PyArg_ParseTuple(args, "OOOOOOOdO:vertex_bounds", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5],
                          &objs[6], &cut, &objs[7]))
        return NULL;
    static const Arg spec[8] = {{"lon", 8, 0},  {"lat", 8, 0},  {"kept", 8, 0}, {"rlon", 8, 0},
                                {"rlat", 8, 0}, {"segs", 8, 0}, {"gap", 8, 0},  {"out", 8, 1}};
    Py_buffer b[8];
    if (get_buffers(objs, spec, b, 8) < 0)
        return NULL;
    Py_ssize_t n = b[0].len / 8, k = b[2].len / 8, m = b[5].len / 8;
    const double *lon = b[0].buf, *lat = b[1].buf, *rlon = b[3].buf, *rlat = b[4].buf, *gap = b[6].buf;
    const int64_t *kept = b[2].buf, *segs = b[5].buf;
    double *out = b[7].buf;
    int ok = b[1].len / 8 == n && b[3].len / 8 == k && b[4].len / 8 == k && b[6].len / 8 == m && b[7].len / 8 == m &&
             increasing_within(kept, k, n);
    for (Py_ssize_t j = 0; ok && j < m; j++)
        ok = segs[j] >= 0 && segs[j] + 1 < k;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "vertex_bounds: inconsistent arrays");
        goto release;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t j = 0; j < m; j++) {
        int64_t s = segs[j];
        out[j] = vertex_bound(lon, lat, kept[s], kept[s + 1], rlon[s], rlat[s], rlon[s + 1], rlat[s + 1], gap[j], cut);
    }
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
release:
    release_buffers(b, 8);
    return result;
}

/* A float or int (exactly those types) as a double; 0 when it is neither or too large. */
static inline int exact_number(PyObject *value, double *out) {
    if (PyFloat_CheckExact(value)) {
        *out = PyFloat_AsDouble(value); /* cannot fail for an exact float */
        return 1;
    }
    if (PyLong_CheckExact(value)) {
        *out = PyLong_AsDouble(value);
        if (*out == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        return 1;
    }
    return 0;
}

/* The length of an exact list or tuple (the caller checked which); -1 for anything else. */
static inline Py_ssize_t sequence_size(PyObject *sequence) {
    if (PyList_CheckExact(sequence))
        return PyList_Size(sequence);
    if (PyTuple_CheckExact(sequence))
        return PyTuple_Size(sequence);
    return -1;
}

/* Item i of an exact list or tuple, a borrowed reference (i is within its size). */
static inline PyObject *sequence_item(PyObject *sequence, int is_list, Py_ssize_t i) {
    return is_list ? PyList_GetItem(sequence, i) : PyTuple_GetItem(sequence, i);
}

static PyObject *read_positions(PyObject *module, PyObject *coords) {
    Py_ssize_t n = sequence_size(coords);
    if (n <= 0)
        Py_RETURN_NONE;
    int coords_list = PyList_CheckExact(coords);
    PyObject *first = sequence_item(coords, coords_list, 0);
    Py_ssize_t width = sequence_size(first);
    if (width != 2 && width != 3)
        Py_RETURN_NONE;
    if (n > PY_SSIZE_T_MAX / (Py_ssize_t)(8 * width))
        return PyErr_NoMemory();
    PyObject *buffer = PyByteArray_FromStringAndSize(NULL, n * width * 8);
    if (!buffer)
        return NULL;
    double *out = (double *)PyByteArray_AsString(buffer);
    int valid = 1;
    for (Py_ssize_t i = 0; i < n; i++, out += width) {
        PyObject *position = sequence_item(coords, coords_list, i);
        if (sequence_size(position) != width)
            goto other;
        int position_list = PyList_CheckExact(position);
        for (Py_ssize_t k = 0; k < width; k++)
            if (!exact_number(sequence_item(position, position_list, k), out + k))
                goto other;
        /* written so that NaN fails */
        valid &= fabs(out[0]) <= 180.0 && fabs(out[1]) <= 90.0 && (width == 2 || isfinite(out[2]));
    }
    return Py_BuildValue("(NnO)", buffer, width, valid ? Py_True : Py_False);
other:
    Py_DECREF(buffer);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"search", search, METH_VARARGS, "search(z, anchor_end, init, pops, kept, seg_err) -> count"},
    {"gaps", gaps, METH_VARARGS, "gaps(lon, lat, out)"},
    {"vertex_bounds", vertex_bounds, METH_VARARGS, "vertex_bounds(lon, lat, kept, rlon, rlat, segs, gap, cut, out)"},
    {"read_positions", read_positions, METH_O, "read_positions(coords) -> (bytearray, width, valid) or None"},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot slots[] = {
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "tools.geometry._kernel",
    "The simplifier's compiled kernel (see _kernel.c).", 0, methods, slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModuleDef_Init(&module); }
