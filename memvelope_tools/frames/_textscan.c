/* Texts as UTF-8 columns with their character and word counts, without holding the GIL.
 *
 * The frames need, for every message text (a Python str): its UTF-8 bytes for an Arrow string
 * column, its length in code points and its word count (len(s.split())). Python can only encode
 * a str under the GIL, one at a time; these two functions read the strs' own storage with the GIL
 * released, so the caller can run them on several threads (see memvelope_tools/frames/text.py).
 *
 *   scan(texts, start, stop, sizes, chars, words) -> int
 *       For texts[start:stop], write the UTF-8 size, code points and words of each into the int64
 *       buffers at the same index; return how many of them held a surrogate code point.
 *   encode(texts, start, stop, offsets, out) -> None
 *       Write the UTF-8 of texts[i] into out[offsets[i]:offsets[i + 1]] for i in [start, stop).
 *
 * texts is a tuple (it cannot change while the GIL is released) of str; anything else in it is a
 * TypeError naming its index. Surrogates follow memvelope_tools.frames.text: a high surrogate followed
 * by a low one is the one character they encode, any other surrogate becomes U+FFFD.
 * Whitespace is what str.isspace() says: a list unchanged since Unicode 6.3, which the tests check
 * against the running Python.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
/* GCC turns the chains of comparisons in SPACE_WIDE into 64-bit bit tests, which stops the scan
 * loops from vectorizing (about 3x slower, with GCC 12). Other compilers get the code as written. */
#pragma GCC optimize("no-tree-reassoc")
#endif

/* 1 for the code points below 256 that str.isspace() accepts. */
static const unsigned char LATIN1_SPACE[256] = {
    [0x09] = 1, [0x0A] = 1, [0x0B] = 1, [0x0C] = 1, [0x0D] = 1,
    [0x1C] = 1, [0x1D] = 1, [0x1E] = 1, [0x1F] = 1, [0x20] = 1,
    [0x85] = 1, [0xA0] = 1,
};

static inline int
is_space(Py_UCS4 c)
{
    if (c < 256) {
        return LATIN1_SPACE[c];
    }
    if (c < 0x2000) {
        return c == 0x1680;
    }
    if (c <= 0x200A) {
        return 1;
    }
    return c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

#define IS_SURROGATE(c) ((Py_UCS4)(c) - 0xD800u < 0x800u)
#define IS_HIGH(c) ((Py_UCS4)(c) - 0xD800u < 0x400u)
#define IS_LOW(c) ((Py_UCS4)(c) - 0xDC00u < 0x400u)

typedef struct {
    int64_t size;
    int64_t chars;
    int64_t words;
    int surrogates;
} Counts;

/* Counts of one str whose storage is an array of T (Py_UCS2 or Py_UCS4). */
#define SCAN_WIDE(T)                                                        \
    static void scan_##T(const T *p, Py_ssize_t n, Counts *out)             \
    {                                                                       \
        int64_t size = 0, words = 0, pairs = 0;                             \
        int prev = 1, space, surrogates = 0;                                \
        for (Py_ssize_t i = 0; i < n; i++) {                                \
            Py_UCS4 c = p[i];                                               \
            if (c < 0x80) {                                                 \
                size += 1;                                                  \
                space = LATIN1_SPACE[c];                                    \
            }                                                               \
            else if (c < 0x800) {                                           \
                size += 2;                                                  \
                space = c < 256 ? LATIN1_SPACE[c] : 0;                      \
            }                                                               \
            else if (IS_SURROGATE(c)) {                                     \
                surrogates = 1;                                             \
                space = 0;                                                  \
                if (IS_HIGH(c) && i + 1 < n && IS_LOW(p[i + 1])) {          \
                    size += 4;                                              \
                    pairs += 1;                                             \
                    i++;                                                    \
                }                                                           \
                else {                                                      \
                    size += 3; /* U+FFFD */                                 \
                }                                                           \
            }                                                               \
            else {                                                          \
                size += c < 0x10000 ? 3 : 4;                                \
                space = is_space(c);                                        \
            }                                                               \
            words += prev & !space;                                         \
            prev = space;                                                   \
        }                                                                   \
        out->size = size;                                                   \
        out->chars = (int64_t)n - pairs;                                    \
        out->words = words;                                                 \
        out->surrogates = surrogates;                                       \
    }

SCAN_WIDE(Py_UCS2)
SCAN_WIDE(Py_UCS4)

/* str.isspace() without branches or tables, in the width of the storage, so the loops below vectorize. */
#define SPACE(T, c) (((c) == 0x20) | ((T)((c) - 0x09) < 5) | ((T)((c) - 0x1C) < 4) | ((c) == 0x85) | ((c) == 0xA0))
#define SPACE_WIDE(T, c) (SPACE(T, c) | ((c) == 0x1680) | ((T)((c) - 0x2000) < 11) | ((c) == 0x2028)           \
                          | ((c) == 0x2029) | ((c) == 0x202F) | ((c) == 0x205F) | ((c) == 0x3000))
#define EXTRA_UCS1(T, c) ((T)((c) >> 7))
#define EXTRA_UCS2(T, c) ((T)(((c) >= 0x80) + ((c) >= 0x800)))
#define EXTRA_UCS4(T, c) ((T)(((c) >= 0x80) + ((c) >= 0x800) + ((c) >= 0x10000)))
#define NO_SURROGATE(T, c) 0
#define HAS_SURROGATE(T, c) ((T)((c) - 0xD800) < 0x800)
#define SCAN_BLOCK 4096

/* The common case, without surrogates: returns 0 (having counted nothing) when there is one.
 * Each block first classifies its characters into sp[], then counts word starts, so that both
 * loops are plain element-wise loops with sums, in the storage's own width (A is wide enough
 * for a block's sums). */
#define FAST_SCAN(T, A, SP, EXTRA, SURROGATE)                                 \
    static int fast_scan_##T(const T *p, Py_ssize_t n, Counts *out)         \
    {                                                                       \
        int64_t size = n, words = 0;                                        \
        T sp[SCAN_BLOCK + 1];                                               \
        T prev = 1;                                                         \
        for (Py_ssize_t b = 0; b < n; b += SCAN_BLOCK) {                    \
            const T *q = p + b;                                             \
            int m = n - b < SCAN_BLOCK ? (int)(n - b) : SCAN_BLOCK;         \
            A extra = 0, w = 0;                                             \
            T surrogates = 0;                                               \
            sp[0] = prev;                                                   \
            for (int i = 0; i < m; i++) {                                   \
                T c = q[i];                                                 \
                sp[i + 1] = (T)SP(T, c);                                    \
                extra += EXTRA(A, c);                                       \
                surrogates |= (T)SURROGATE(T, c);                           \
            }                                                               \
            if (surrogates) {                                               \
                return 0;                                                   \
            }                                                               \
            for (int i = 0; i < m; i++) {                                   \
                w += (A)(sp[i] & (sp[i + 1] ^ 1));                          \
            }                                                               \
            size += extra;                                                  \
            words += w;                                                     \
            prev = sp[m];                                                   \
        }                                                                   \
        out->size = size;                                                   \
        out->chars = n;                                                     \
        out->words = words;                                                 \
        out->surrogates = 0;                                                \
        return 1;                                                           \
    }

FAST_SCAN(Py_UCS1, uint16_t, SPACE, EXTRA_UCS1, NO_SURROGATE)
FAST_SCAN(Py_UCS2, uint16_t, SPACE_WIDE, EXTRA_UCS2, HAS_SURROGATE)
FAST_SCAN(Py_UCS4, uint32_t, SPACE_WIDE, EXTRA_UCS4, HAS_SURROGATE)

static void
scan_one(PyObject *s, Counts *out)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    const void *data = PyUnicode_DATA(s);
    switch (PyUnicode_KIND(s)) {
    case PyUnicode_1BYTE_KIND:
        fast_scan_Py_UCS1((const Py_UCS1 *)data, n, out);
        break;
    case PyUnicode_2BYTE_KIND:
        if (!fast_scan_Py_UCS2((const Py_UCS2 *)data, n, out)) {
            scan_Py_UCS2((const Py_UCS2 *)data, n, out);
        }
        break;
    default:
        if (!fast_scan_Py_UCS4((const Py_UCS4 *)data, n, out)) {
            scan_Py_UCS4((const Py_UCS4 *)data, n, out);
        }
        break;
    }
}

/* One non-ASCII character of p (at *ip, a pair counting as one) as UTF-8 at o; NULL if it would
 * pass end. */
static inline unsigned char *
encode_char(Py_UCS4 c, Py_UCS4 next, Py_ssize_t *ip, unsigned char *o, unsigned char *end)
{
    if (IS_SURROGATE(c)) {
        if (IS_HIGH(c) && IS_LOW(next)) {
            c = 0x10000 + ((c - 0xD800) << 10) + (next - 0xDC00);
            *ip += 1;
        }
        else {
            c = 0xFFFD;
        }
    }
    *ip += 1;
    if (c < 0x80) {
        if (end - o < 1) return NULL;
        *o++ = (unsigned char)c;
    }
    else if (c < 0x800) {
        if (end - o < 2) return NULL;
        *o++ = (unsigned char)(0xC0 | (c >> 6));
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    }
    else if (c < 0x10000) {
        if (end - o < 3) return NULL;
        *o++ = (unsigned char)(0xE0 | (c >> 12));
        *o++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    }
    else {
        if (end - o < 4) return NULL;
        *o++ = (unsigned char)(0xF0 | (c >> 18));
        *o++ = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
        *o++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    }
    return o;
}

/* UTF-8 of one str stored as T into [o, end); returns the end written, or NULL if it would pass
 * end. ASCII goes 8 characters at a time while it lasts (NON_ASCII: the bits that are zero in 8
 * ASCII characters of T), then one at a time up to the next other character. */
#define ENCODE(T, NON_ASCII)                                                \
    static unsigned char *encode_##T(const T *p, Py_ssize_t n, unsigned char *o, unsigned char *end) \
    {                                                                       \
        Py_ssize_t i = 0;                                                   \
        while (i < n) {                                                     \
            while (n - i >= 8 && end - o >= 8) {                            \
                uint64_t w[sizeof(T)], any = 0;                             \
                memcpy(w, p + i, sizeof(w));                                \
                for (size_t k = 0; k < sizeof(T); k++) any |= w[k];         \
                if (any & (NON_ASCII)) break;                               \
                for (int k = 0; k < 8; k++) o[k] = (unsigned char)p[i + k]; \
                o += 8;                                                     \
                i += 8;                                                     \
            }                                                               \
            while (i < n && p[i] < 0x80) {                                  \
                if (o >= end) return NULL;                                  \
                *o++ = (unsigned char)p[i++];                               \
            }                                                               \
            if (i < n) {                                                    \
                o = encode_char(p[i], i + 1 < n ? p[i + 1] : 0, &i, o, end); \
                if (o == NULL) return NULL;                                 \
            }                                                               \
        }                                                                   \
        return o;                                                           \
    }

ENCODE(Py_UCS1, 0x8080808080808080ull)
ENCODE(Py_UCS2, 0xFF80FF80FF80FF80ull)
ENCODE(Py_UCS4, 0xFFFFFF80FFFFFF80ull)

static unsigned char *
encode_one(PyObject *s, unsigned char *o, unsigned char *end)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    const void *data = PyUnicode_DATA(s);
    switch (PyUnicode_KIND(s)) {
    case PyUnicode_1BYTE_KIND:
        if (PyUnicode_IS_ASCII(s)) {
            if (end - o < n) return NULL;
            memcpy(o, data, (size_t)n);
            return o + n;
        }
        return encode_Py_UCS1((const Py_UCS1 *)data, n, o, end);
    case PyUnicode_2BYTE_KIND:
        return encode_Py_UCS2((const Py_UCS2 *)data, n, o, end);
    default:
        return encode_Py_UCS4((const Py_UCS4 *)data, n, o, end);
    }
}

/* 1 when texts[i] can be read without the GIL; 0 when it is not a str (or, before Python 3.12,
 * not "ready", which only the GIL can fix). */
static inline int
readable(PyObject *s)
{
    if (!PyUnicode_Check(s)) {
        return 0;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (!PyUnicode_IS_READY(s)) {
        return 0;
    }
#endif
    return 1;
}

/* With the GIL: make texts[i] readable, or raise TypeError. Returns -1 on error. */
static int
fix_item(PyObject *texts, Py_ssize_t i)
{
    PyObject *s = PyTuple_GET_ITEM(texts, i);
    if (!PyUnicode_Check(s)) {
        PyErr_Format(PyExc_TypeError, "item %zd is %.100s, not str", i, Py_TYPE(s)->tp_name);
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(s) < 0) {
        return -1;
    }
#endif
    return 0;
}

static int
check_range(PyObject *texts, Py_ssize_t start, Py_ssize_t stop)
{
    if (start < 0 || stop < start || stop > PyTuple_GET_SIZE(texts)) {
        PyErr_SetString(PyExc_IndexError, "start and stop must satisfy 0 <= start <= stop <= len(texts)");
        return -1;
    }
    return 0;
}

static int
check_int64(Py_buffer *view, Py_ssize_t need, const char *name)
{
    if (view->len < need * (Py_ssize_t)sizeof(int64_t) || view->itemsize != (Py_ssize_t)sizeof(int64_t)) {
        PyErr_Format(PyExc_ValueError, "%s must be a contiguous int64 buffer of at least %zd items", name, need);
        return -1;
    }
    return 0;
}

static PyObject *
textscan_scan(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *texts;
    Py_ssize_t start, stop, i;
    Py_buffer sizes_view, chars_view, words_view;
    Py_ssize_t surrogates = 0;
    PyObject *result = NULL;

    if (!PyArg_ParseTuple(args, "O!nnw*w*w*", &PyTuple_Type, &texts, &start, &stop,
                          &sizes_view, &chars_view, &words_view)) {
        return NULL;
    }
    if (check_range(texts, start, stop) < 0 || check_int64(&sizes_view, stop, "sizes") < 0
        || check_int64(&chars_view, stop, "chars") < 0 || check_int64(&words_view, stop, "words") < 0) {
        goto done;
    }
    int64_t *sizes = (int64_t *)sizes_view.buf, *chars = (int64_t *)chars_view.buf;
    int64_t *words = (int64_t *)words_view.buf;
    i = start;
    while (i < stop) {
        Py_BEGIN_ALLOW_THREADS
        for (; i < stop; i++) {
            PyObject *s = PyTuple_GET_ITEM(texts, i);
            Counts c;
            if (!readable(s)) {
                break;
            }
            scan_one(s, &c);
            sizes[i] = c.size;
            chars[i] = c.chars;
            words[i] = c.words;
            surrogates += c.surrogates;
        }
        Py_END_ALLOW_THREADS
        if (i < stop && fix_item(texts, i) < 0) {
            goto done;
        }
    }
    result = PyLong_FromSsize_t(surrogates);
done:
    PyBuffer_Release(&sizes_view);
    PyBuffer_Release(&chars_view);
    PyBuffer_Release(&words_view);
    return result;
}

static PyObject *
textscan_encode(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *texts;
    Py_ssize_t start, stop, i;
    Py_buffer offsets_view, out_view;
    PyObject *result = NULL;
    Py_ssize_t mismatch = -1;

    if (!PyArg_ParseTuple(args, "O!nny*w*", &PyTuple_Type, &texts, &start, &stop, &offsets_view, &out_view)) {
        return NULL;
    }
    if (check_range(texts, start, stop) < 0 || check_int64(&offsets_view, stop + 1, "offsets") < 0) {
        goto done;
    }
    const int64_t *offsets = (const int64_t *)offsets_view.buf;
    unsigned char *out = (unsigned char *)out_view.buf;
    for (i = start; i < stop; i++) {
        if (offsets[i] < 0 || offsets[i + 1] < offsets[i] || offsets[i + 1] > (int64_t)out_view.len) {
            PyErr_Format(PyExc_ValueError, "offsets[%zd:%zd] do not lie within out", i, i + 2);
            goto done;
        }
    }
    i = start;
    while (i < stop && mismatch < 0) {
        Py_BEGIN_ALLOW_THREADS
        for (; i < stop; i++) {
            PyObject *s = PyTuple_GET_ITEM(texts, i);
            if (!readable(s)) {
                break;
            }
            unsigned char *end = out + offsets[i + 1];
            if (encode_one(s, out + offsets[i], end) != end) {
                mismatch = i;
                break;
            }
        }
        Py_END_ALLOW_THREADS
        if (mismatch < 0 && i < stop && fix_item(texts, i) < 0) {
            goto done;
        }
    }
    if (mismatch >= 0) {
        PyErr_Format(PyExc_ValueError, "offsets do not match the UTF-8 size of item %zd", mismatch);
        goto done;
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&offsets_view);
    PyBuffer_Release(&out_view);
    return result;
}

static PyMethodDef textscan_methods[] = {
    {"scan", textscan_scan, METH_VARARGS,
     "scan(texts, start, stop, sizes, chars, words) -> number of texts holding surrogates\n\n"
     "UTF-8 size, code points and words of texts[start:stop] into int64 buffers (GIL released)."},
    {"encode", textscan_encode, METH_VARARGS,
     "encode(texts, start, stop, offsets, out) -> None\n\n"
     "UTF-8 of texts[i] into out[offsets[i]:offsets[i + 1]] for start <= i < stop (GIL released)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef textscan_module = {
    PyModuleDef_HEAD_INIT, "_textscan",
    "UTF-8, character and word counts of Python strs, computed without the GIL.", -1, textscan_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__textscan(void)
{
    return PyModule_Create(&textscan_module);
}
