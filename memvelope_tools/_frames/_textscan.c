/* Texts as UTF-8 columns with their character and word counts, without holding the GIL.
 *
 * The frames need, for every message text (a Python str): its UTF-8 bytes for an Arrow string
 * column, its length in code points and its word count (len(s.split())). Python can only encode
 * a str under the GIL, one at a time; these two functions read the strs' own storage with the GIL
 * released, so the caller can run them on several threads (see memvelope_tools/_frames/text.py).
 *
 *   scan(texts, start, stop, sizes, chars, words) -> int
 *       For texts[start:stop], write the UTF-8 size, code points and words of each into the int64
 *       buffers at the same index; return how many of them held a surrogate code point.
 *   encode(texts, start, stop, offsets, out) -> None
 *       Write the UTF-8 of texts[i] into out[offsets[i]:offsets[i + 1]] for i in [start, stop).
 *   extract(buf, spans) -> columns or None
 *       The same columns, and the conversations' own, straight from the JSON text of an envelope's
 *       conversations (see the section below), so that no Python object is made for them.
 *   words(offsets, data, owners, index, blocks, max_word, counted) -> words or None
 *       The words topics counts in UTF-8 texts of an Arrow column, in one pass (see its section).
 *
 * texts is a tuple (it cannot change while the GIL is released) of str; anything else in it is a
 * TypeError naming its index. Surrogates follow memvelope_tools._frames.text: a high surrogate followed
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
    if (view->len < need * (Py_ssize_t)sizeof(int64_t) || view->itemsize != (Py_ssize_t)sizeof(int64_t)
        || (uintptr_t)view->buf % _Alignof(int64_t) != 0) {
        PyErr_Format(PyExc_ValueError, "%s must be a contiguous, aligned int64 buffer of at least %zd items", name,
                     need);
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

/* ---- columns of an envelope's conversations, straight from their JSON text ---------------------
 *
 * extract(buf, spans) reads the conversations whose JSON text lies at buf[spans[2k]:spans[2k + 1]]
 * (each already checked against the JSON grammar by the package's scanner, with no lone surrogate
 * escape and no long integer in it) into columns, with the GIL released. It returns None when
 * anything is not the plain case, so that the caller parses those conversations the general way:
 * bytes that are not UTF-8, a key written with an escape, a field of the spec's tables that is
 * missing, repeated or of another JSON type, a role other than "user" or "assistant".
 *
 * Every read is bounded by the end of its conversation's span, whatever the span holds: text that is
 * not the JSON the scanner checked (cut short, or not JSON at all) is not the plain case either. Spans
 * that do not lie within buf, or a spans buffer that is not pairs of int64, are a ValueError.
 */

typedef struct {
    unsigned char *data; /* a bytes object's storage, as large as the whole input */
    int32_t *offsets;
    unsigned char *valid;
    Py_ssize_t len, n, cap;
    Py_ssize_t room; /* bytes data holds */
} Column;

typedef struct {
    int64_t *v;
    Py_ssize_t n, cap;
} Ints;

static int
ints_push(Ints *a, int64_t x)
{
    if (a->n == a->cap) {
        Py_ssize_t cap = a->cap ? 2 * a->cap : 1024;
        int64_t *v = realloc(a->v, (size_t)cap * sizeof(int64_t));
        if (v == NULL) return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

static int
column_grow(Column *c)
{
    if (c->n + 1 >= c->cap) {
        Py_ssize_t cap = c->cap ? 2 * c->cap : 1024;
        int32_t *o = realloc(c->offsets, (size_t)(cap + 1) * sizeof(int32_t));
        if (o == NULL) return -1;
        c->offsets = o;
        unsigned char *v = realloc(c->valid, (size_t)cap);
        if (v == NULL) return -1;
        c->valid = v;
        c->cap = cap;
    }
    return 0;
}

/* 1 when p[0:n] is UTF-8 as Python's strict decoder reads it (no surrogates, no overlong forms). */
static int
utf8_valid(const unsigned char *p, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i < n) {
        if (n - i >= 8) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (!(w & 0x8080808080808080ull)) {
                i += 8;
                continue;
            }
        }
        unsigned char c = p[i];
        if (c < 0x80) {
            i++;
        }
        else if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (p[i + 1] & 0xC0) != 0x80) return 0;
            i += 2;
        }
        else if (c >= 0xE0 && c <= 0xEF) {
            if (i + 2 >= n || (p[i + 1] & 0xC0) != 0x80 || (p[i + 2] & 0xC0) != 0x80) return 0;
            if (c == 0xE0 && p[i + 1] < 0xA0) return 0;
            if (c == 0xED && p[i + 1] >= 0xA0) return 0;
            i += 3;
        }
        else if (c >= 0xF0 && c <= 0xF4) {
            if (i + 3 >= n || (p[i + 1] & 0xC0) != 0x80 || (p[i + 2] & 0xC0) != 0x80 || (p[i + 3] & 0xC0) != 0x80)
                return 0;
            if (c == 0xF0 && p[i + 1] < 0x90) return 0;
            if (c == 0xF4 && p[i + 1] >= 0x90) return 0;
            i += 4;
        }
        else {
            return 0;
        }
    }
    return 1;
}

/* Past the JSON whitespace at p[i], stopping at end. */
static inline Py_ssize_t
ws(const unsigned char *p, Py_ssize_t i, Py_ssize_t end)
{
    while (i < end && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t')) i++;
    return i;
}

/* 1 when p[i] (i < end) is c. */
#define AT(p, i, end, c) ((i) < (end) && (p)[i] == (c))

static inline int
hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
    return -1;
}

/* The four hex digits at p into *cp; 0 when one is not a hex digit. */
static inline int
hex4(const unsigned char *p, uint32_t *cp)
{
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        int d = hex_digit(p[k]);
        if (d < 0) return 0;
        v = v << 4 | (uint32_t)d;
    }
    *cp = v;
    return 1;
}

/* 1 when the UTF-8 character at p (lead byte c, its sequence already checked) is whitespace. */
static inline int
wide_space(unsigned char c, const unsigned char *p)
{
    if (c == 0xC2) return p[1] == 0x85 || p[1] == 0xA0;
    if (c == 0xE1) return p[1] == 0x9A && p[2] == 0x80;
    if (c == 0xE2) {
        if (p[1] == 0x80) return p[2] <= 0x8A || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF;
        return p[1] == 0x81 && p[2] == 0x9F;
    }
    return c == 0xE3 && p[1] == 0x80 && p[2] == 0x80;
}

#define CONT(b) (((b) & 0xC0) == 0x80)

/* The string at p[*ip] (its opening quote) decoded into o, which ends at o_end; its code points and
 * words when chars is not NULL. Returns the end written, or NULL when the string is not the plain
 * case: bytes that are not UTF-8 as Python's strict decoder reads it, an escape that is not JSON's,
 * a surrogate escape that is not half of a pair, no closing quote before end, or more bytes than o
 * holds. */
static unsigned char *
decode_string(const unsigned char *p, Py_ssize_t end, Py_ssize_t *ip, unsigned char *o, const unsigned char *o_end,
              int64_t *chars, int64_t *words)
{
    Py_ssize_t i = *ip + 1;
    int64_t nchars = 0, nwords = 0;
    int prev = 1, space;
    for (;;) {
        /* Eight ASCII characters at a time, none a quote or a backslash: the spaces among them
         * (0x80 in their bytes) and the words that start there, counted as bits. */
        while (end - i >= 8 && o_end - o >= 8) {
            uint64_t w, quote, backslash, blank;
            memcpy(&w, p + i, 8);
            quote = w ^ 0x2222222222222222ull;
            backslash = w ^ 0x5C5C5C5C5C5C5C5Cull;
            blank = w ^ 0x2020202020202020ull;
            /* 0x80 in each byte that is zero, exactly (no carry crosses bytes). */
#define ZERO_BYTES(x) (~((((x) & 0x7F7F7F7F7F7F7F7Full) + 0x7F7F7F7F7F7F7F7Full) | (x)) & 0x8080808080808080ull)
            if ((w & 0x8080808080808080ull) | ZERO_BYTES(quote) | ZERO_BYTES(backslash)) {
                break;
            }
            uint64_t sp = ZERO_BYTES(blank);
            uint64_t starts = ~sp & 0x8080808080808080ull & ((sp << 8) | (prev ? 0x80ull : 0));
#undef ZERO_BYTES
            memcpy(o, p + i, 8);
            o += 8;
            i += 8;
            nchars += 8;
            nwords += (int64_t)(((starts >> 7) * 0x0101010101010101ull) >> 56); /* one bit per byte */
            prev = (int)(sp >> 63);
        }
        if (i >= end) {
            return NULL; /* no closing quote */
        }
        unsigned char c = p[i];
        if (o_end - o < 4 && c != '"') {
            return NULL; /* a character may take up to 4 bytes: no room */
        }
        if (c < 0x80) {
            if (c == '"') {
                break;
            }
            if (c != '\\') {
                *o++ = c;
                i++;
                space = c == ' '; /* the other ASCII whitespace is escaped in JSON text */
            }
            else {
                uint32_t cp;
                if (end - i < 2) return NULL;
                unsigned char e = p[i + 1];
                i += 2;
                switch (e) {
                case 'b': cp = '\b'; break;
                case 'f': cp = '\f'; break;
                case 'n': cp = '\n'; break;
                case 'r': cp = '\r'; break;
                case 't': cp = '\t'; break;
                case 'u':
                    if (end - i < 4 || !hex4(p + i, &cp)) return NULL;
                    i += 4;
                    if (IS_SURROGATE(cp)) {
                        uint32_t low;
                        if (!IS_HIGH(cp) || end - i < 6 || p[i] != '\\' || p[i + 1] != 'u') return NULL;
                        if (!hex4(p + i + 2, &low) || !IS_LOW(low)) return NULL;
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                        i += 6;
                    }
                    break;
                case '"':
                case '\\':
                case '/': cp = e; break;
                default: return NULL;
                }
                if (cp < 0x80) {
                    *o++ = (unsigned char)cp;
                }
                else if (cp < 0x800) {
                    *o++ = (unsigned char)(0xC0 | (cp >> 6));
                    *o++ = (unsigned char)(0x80 | (cp & 0x3F));
                }
                else if (cp < 0x10000) {
                    *o++ = (unsigned char)(0xE0 | (cp >> 12));
                    *o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
                    *o++ = (unsigned char)(0x80 | (cp & 0x3F));
                }
                else {
                    *o++ = (unsigned char)(0xF0 | (cp >> 18));
                    *o++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
                    *o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
                    *o++ = (unsigned char)(0x80 | (cp & 0x3F));
                }
                space = is_space(cp);
            }
        }
        else if (c >= 0xC2 && c <= 0xDF) {
            if (end - i < 2 || !CONT(p[i + 1])) return NULL;
            space = c == 0xC2 && wide_space(c, p + i);
            o[0] = c;
            o[1] = p[i + 1];
            o += 2;
            i += 2;
        }
        else if (c >= 0xE0 && c <= 0xEF) {
            if (end - i < 3 || !CONT(p[i + 1]) || !CONT(p[i + 2]) || (c == 0xE0 && p[i + 1] < 0xA0) || (c == 0xED && p[i + 1] >= 0xA0))
                return NULL;
            space = c <= 0xE3 && wide_space(c, p + i);
            o[0] = c;
            o[1] = p[i + 1];
            o[2] = p[i + 2];
            o += 3;
            i += 3;
        }
        else if (c >= 0xF0 && c <= 0xF4) {
            if (end - i < 4 || !CONT(p[i + 1]) || !CONT(p[i + 2]) || !CONT(p[i + 3]) || (c == 0xF0 && p[i + 1] < 0x90)
                || (c == 0xF4 && p[i + 1] >= 0x90))
                return NULL;
            space = 0;
            memcpy(o, p + i, 4);
            o += 4;
            i += 4;
        }
        else {
            return NULL;
        }
        nwords += prev & !space;
        prev = space;
        nchars++;
    }
    *ip = i + 1;
    if (chars != NULL) {
        *chars = nchars;
        *words = nwords;
    }
    return o;
}

/* Past the value at p[i]; -1 when one of its strings is not UTF-8, or the value does not end before end. */
static Py_ssize_t
skip_value(const unsigned char *p, Py_ssize_t i, Py_ssize_t end)
{
    Py_ssize_t depth = 0;
    for (;;) {
        if (i >= end) return -1;
        unsigned char c = p[i];
        if (c == '"') {
            Py_ssize_t start = ++i;
            while (i < end && p[i] != '"') i += p[i] == '\\' ? 2 : 1;
            if (i >= end || !utf8_valid(p + start, i - start)) return -1;
            i++;
        }
        else if (c == '[' || c == '{') {
            depth++;
            i++;
        }
        else if (c == ']' || c == '}') {
            depth--;
            i++;
        }
        else if (c == ',' || c == ':' || c == ' ' || c == '\n' || c == '\r' || c == '\t') {
            i++;
        }
        else { /* a number or a literal */
            while (i < end && !(p[i] == ',' || p[i] == ']' || p[i] == '}' || p[i] == ' ' || p[i] == '\n'
                                || p[i] == '\r' || p[i] == '\t'))
                i++;
        }
        if (depth == 0) {
            return i;
        }
    }
}

#define NULLABLE 1
#define COUNTED 2

/* A string (or null, with NULLABLE) at p[*ip] into column c; -1 when it is neither (before end), or on
 * no memory. */
static int
read_string(const unsigned char *p, Py_ssize_t end, Py_ssize_t *ip, Column *c, int how, Ints *chars, Ints *words)
{
    Py_ssize_t i = *ip;
    if (column_grow(c) < 0) return -1;
    if ((how & NULLABLE) && end - i >= 4 && memcmp(p + i, "null", 4) == 0) {
        c->valid[c->n] = 0;
        *ip = i + 4;
    }
    else if (AT(p, i, end, '"')) {
        int64_t nc = 0, nw = 0;
        unsigned char *o =
            decode_string(p, end, ip, c->data + c->len, c->data + c->room, (how & COUNTED) ? &nc : NULL, &nw);
        if (o == NULL) return -1;
        c->len = o - c->data;
        c->valid[c->n] = 1;
        if ((how & COUNTED) && (ints_push(chars, nc) < 0 || ints_push(words, nw) < 0)) return -1;
    }
    else {
        return -1;
    }
    c->n++;
    c->offsets[c->n] = (int32_t)c->len;
    return 0;
}

/* The key at p[*ip] and its colon: its index in keys (or -1 for another key), or -2 for a key written
 * with an escape or not UTF-8, or without its colon before end. */
static int
read_key(const unsigned char *p, Py_ssize_t *ip, Py_ssize_t end, const char *const *keys, int nkeys)
{
    Py_ssize_t i = *ip + 1, start = i;
    while (i < end && p[i] != '"') {
        if (p[i] == '\\') return -2;
        i++;
    }
    if (i >= end) return -2;
    Py_ssize_t len = i - start;
    if (!utf8_valid(p + start, len)) return -2;
    i = ws(p, i + 1, end);
    if (!AT(p, i, end, ':')) return -2;
    *ip = ws(p, i + 1, end);
    for (int k = 0; k < nkeys; k++) {
        if ((Py_ssize_t)strlen(keys[k]) == len && memcmp(p + start, keys[k], (size_t)len) == 0) return k;
    }
    return -1;
}

static const char *const CONV_KEYS[] = {"id", "title", "created_at", "updated_at", "messages"};
static const char *const MSG_KEYS[] = {"id", "role", "ts", "text"};

typedef struct {
    Column conv[4]; /* id, title, created_at, updated_at */
    Column msg[3];  /* id, ts, text */
    Ints counts, roles, chars, words;
} Extracted;

/* One message object at p[*ip], ending before end; 0, or -1 to give up. */
static int
read_message(const unsigned char *p, Py_ssize_t *ip, Py_ssize_t end, Extracted *x)
{
    Py_ssize_t i = *ip;
    int seen = 0;
    if (!AT(p, i, end, '{')) return -1;
    i = ws(p, i + 1, end);
    while (AT(p, i, end, '"')) {
        int k = read_key(p, &i, end, MSG_KEYS, 4);
        if (k == -2 || (k >= 0 && (seen >> k) & 1)) return -1;
        if (k >= 0) seen |= 1 << k;
        if (k == 0) {
            if (read_string(p, end, &i, &x->msg[0], 0, NULL, NULL) < 0) return -1;
        }
        else if (k == 1) {
            Py_ssize_t j = i + 1;
            if (!AT(p, i, end, '"')) return -1;
            while (j < end && p[j] != '"' && p[j] != '\\') j++;
            if (j >= end || p[j] == '\\') {
                return -1; /* a role written with an escape, or cut short */
            }
            if (j - i - 1 == 4 && memcmp(p + i + 1, "user", 4) == 0) {
                if (ints_push(&x->roles, 0) < 0) return -1;
            }
            else if (j - i - 1 == 9 && memcmp(p + i + 1, "assistant", 9) == 0) {
                if (ints_push(&x->roles, 1) < 0) return -1;
            }
            else {
                return -1; /* another role */
            }
            i = j + 1;
        }
        else if (k == 2) {
            if (read_string(p, end, &i, &x->msg[1], NULLABLE, NULL, NULL) < 0) return -1;
        }
        else if (k == 3) {
            if (read_string(p, end, &i, &x->msg[2], COUNTED, &x->chars, &x->words) < 0) return -1;
        }
        else if ((i = skip_value(p, i, end)) < 0) {
            return -1;
        }
        i = ws(p, i, end);
        if (AT(p, i, end, ',')) i = ws(p, i + 1, end);
    }
    if (seen != 0xF || !AT(p, i, end, '}')) return -1;
    *ip = i + 1;
    return 0;
}

/* The conversation object at p[start], which ends just before p[end]; 0, or -1 to give up. */
static int
read_conversation(const unsigned char *p, Py_ssize_t start, Py_ssize_t end, Extracted *x)
{
    Py_ssize_t i = start;
    int seen = 0;
    if (!AT(p, i, end, '{')) return -1;
    i = ws(p, i + 1, end);
    while (AT(p, i, end, '"')) {
        int k = read_key(p, &i, end, CONV_KEYS, 5);
        if (k == -2 || (k >= 0 && (seen >> k) & 1)) return -1;
        if (k >= 0) seen |= 1 << k;
        if (k >= 0 && k < 4) {
            if (read_string(p, end, &i, &x->conv[k], k == 1 ? 0 : NULLABLE, NULL, NULL) < 0) return -1;
        }
        else if (k == 4) {
            int64_t n = 0;
            if (!AT(p, i, end, '[')) return -1;
            i = ws(p, i + 1, end);
            while (!AT(p, i, end, ']')) {
                if (read_message(p, &i, end, x) < 0) return -1;
                n++;
                i = ws(p, i, end);
                if (AT(p, i, end, ',')) i = ws(p, i + 1, end);
            }
            i++;
            if (ints_push(&x->counts, n) < 0) return -1;
        }
        else if ((i = skip_value(p, i, end)) < 0) {
            return -1;
        }
        i = ws(p, i, end);
        if (AT(p, i, end, ',')) i = ws(p, i + 1, end);
    }
    return seen == 0x1F && AT(p, i, end, '}') && i + 1 == end ? 0 : -1;
}

static PyObject *
ints_bytes(Ints *a)
{
    return PyBytes_FromStringAndSize((const char *)a->v, a->n * (Py_ssize_t)sizeof(int64_t));
}

/* (data, offsets, valid) of a column as bytes; data is the column's own bytes object, shrunk. */
static PyObject *
column_tuple(Column *c, PyObject **data)
{
    if (_PyBytes_Resize(data, c->len) < 0) return NULL;
    PyObject *offsets = PyBytes_FromStringAndSize((const char *)c->offsets, (c->n + 1) * (Py_ssize_t)sizeof(int32_t));
    PyObject *valid = PyBytes_FromStringAndSize((const char *)c->valid, c->n);
    if (offsets == NULL || valid == NULL) {
        Py_XDECREF(offsets);
        Py_XDECREF(valid);
        return NULL;
    }
    PyObject *t = PyTuple_Pack(3, *data, offsets, valid);
    Py_DECREF(offsets);
    Py_DECREF(valid);
    return t;
}

static PyObject *
textscan_extract(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer buf_view, spans_view;
    PyObject *result = NULL, *datas[7] = {NULL};
    Extracted x;
    int failed = 0;
    int64_t *spans = NULL;
    memset(&x, 0, sizeof(x));

    if (!PyArg_ParseTuple(args, "y*y*", &buf_view, &spans_view)) {
        return NULL;
    }
    if (spans_view.len % (Py_ssize_t)(2 * sizeof(int64_t)) != 0) {
        PyErr_SetString(PyExc_ValueError, "spans must be pairs of int64 (start, end)");
        goto done;
    }
    /* A copy, aligned whatever the buffer given. */
    spans = malloc(spans_view.len ? (size_t)spans_view.len : 1);
    if (spans == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(spans, spans_view.buf, (size_t)spans_view.len);
    Py_ssize_t nspans = spans_view.len / (Py_ssize_t)(2 * sizeof(int64_t)), total = 0;
    for (Py_ssize_t k = 0; k < nspans; k++) {
        int64_t start = spans[2 * k], end = spans[2 * k + 1];
        if (start < 0 || end < start || end > (int64_t)buf_view.len) {
            PyErr_SetString(PyExc_ValueError, "spans must lie within buf");
            goto done;
        }
        total = end - start > INT32_MAX - total ? (Py_ssize_t)INT32_MAX + 1 : total + (Py_ssize_t)(end - start);
    }
    if (total > INT32_MAX) {
        result = Py_None; /* more than one string column holds: the general way cuts it */
        Py_INCREF(result);
        goto done;
    }
    Column *columns[7] = {&x.conv[0], &x.conv[1], &x.conv[2], &x.conv[3], &x.msg[0], &x.msg[1], &x.msg[2]};
    for (int c = 0; c < 7; c++) {
        datas[c] = PyBytes_FromStringAndSize(NULL, total); /* untouched pages cost no memory */
        if (datas[c] == NULL) goto done;
        columns[c]->data = (unsigned char *)PyBytes_AS_STRING(datas[c]);
        columns[c]->room = total;
        if (column_grow(columns[c]) < 0) {
            failed = 2;
            break;
        }
        columns[c]->offsets[0] = 0;
    }
    if (!failed) {
        const unsigned char *p = (const unsigned char *)buf_view.buf;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t k = 0; k < nspans; k++) {
            if (read_conversation(p, spans[2 * k], spans[2 * k + 1], &x) < 0) {
                failed = 1;
                break;
            }
        }
        Py_END_ALLOW_THREADS
    }
    if (failed) {
        /* No memory, or not the plain case: the general way decides which. */
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    PyObject *cols[7] = {NULL};
    int ok = 1;
    for (int c = 0; c < 7 && ok; c++) {
        cols[c] = column_tuple(columns[c], &datas[c]);
        ok = cols[c] != NULL;
    }
    PyObject *counts = ok ? ints_bytes(&x.counts) : NULL, *roles = ok ? ints_bytes(&x.roles) : NULL;
    PyObject *chars = ok ? ints_bytes(&x.chars) : NULL, *words = ok ? ints_bytes(&x.words) : NULL;
    if (ok && counts && roles && chars && words) {
        result = Py_BuildValue("(OOOOOOOOOOO)", cols[0], cols[1], cols[2], cols[3], counts, cols[4], roles,
                               cols[5], cols[6], chars, words);
    }
    for (int c = 0; c < 7; c++) Py_XDECREF(cols[c]);
    Py_XDECREF(counts);
    Py_XDECREF(roles);
    Py_XDECREF(chars);
    Py_XDECREF(words);
done:
    for (int c = 0; c < 7; c++) {
        Py_XDECREF(datas[c]);
        free(c < 4 ? x.conv[c].offsets : x.msg[c - 4].offsets);
        free(c < 4 ? x.conv[c].valid : x.msg[c - 4].valid);
    }
    free(x.counts.v);
    free(x.roles.v);
    free(x.chars.v);
    free(x.words.v);
    free(spans);
    PyBuffer_Release(&buf_view);
    PyBuffer_Release(&spans_view);
    return result;
}

/* ---- The words of texts, as topics counts them ---------------------------------------------------
 *
 *   words(offsets, data, owners, index, blocks, max_word, counted) -> (dictionary offsets, dictionary
 *                                                    bytes, indices, owners, counts) or None
 *       The words of the UTF-8 texts data[offsets[i]:offsets[i + 1]] (offsets: int64), those of text i
 *       belonging to owners[i] (int64), in the order and under the rules of
 *       memvelope_tools._topic_units.split_words, dictionary-encoded: the distinct words in the order
 *       first met (int64 offsets and their UTF-8 bytes), then each word's index among them (int32) and
 *       its owner (int64), counts None. With counted true, each distinct (owner, word) comes once, in
 *       the order first met, and counts (float32) says how many times. None when a text is not UTF-8
 *       (the Arrow route then says what is wrong).
 *
 * What each code point is comes as a table the caller derives from the Arrow kernels split_words
 * runs, so that the two agree: blocks[index[cp >> 8] * 256 + (cp & 255)] holds, in its low 24 bits,
 * the lower-cased code point's offset from cp (two's complement) and, in its high 8 bits, the W_
 * flags of the lower-cased code point.
 */

#define W_SPACE 1u
#define W_ALPHA 2u
#define W_LETTER 4u /* a letter or a mark: what the pattern NOT_LETTER does not split at */
#define W_HAN 8u
#define W_HIRAGANA 16u
#define W_KATAKANA 32u
#define W_STOP 64u
#define W_SEPARATOR (W_SPACE | W_HIRAGANA | W_STOP)
#define W_BLOCKS (0x110000 >> 8)
#define W_HAN_BYTES 3 /* the UTF-8 size of every code point W_HAN marks */

typedef struct {
    int64_t start; /* in Splitter.low */
    int64_t owner;
    int32_t len; /* bytes */
} Word;

typedef struct {
    Word *v;
    Py_ssize_t n, room;
} WordList;

typedef struct {
    const uint16_t *index;
    const uint32_t *blocks;
    uint32_t ascii[128]; /* the blocks' entries of the first 128 code points */
    Py_ssize_t max_word;
    unsigned char *low; /* the lower-cased characters of the words read so far */
    Py_ssize_t low_n, low_room;
    uint16_t *chars; /* of the word being read: each character's flags, and its size << 8 */
    Py_ssize_t n_chars, chars_room;
    Py_ssize_t start; /* of the word being read, in low */
    int group, alpha, open;
    /* Kept words and runs of ideographs, of words all letters and of the others. */
    WordList words, mixed, runs, mixed_runs;
} Splitter;

static int
grow(void **v, Py_ssize_t *room, Py_ssize_t need, size_t item)
{
    if (need <= *room) return 0;
    Py_ssize_t r = *room ? *room : 1024;
    while (r < need) r *= 2;
    void *p = realloc(*v, (size_t)r * item);
    if (p == NULL) return -1;
    *v = p;
    *room = r;
    return 0;
}

static int
word_push(WordList *w, Py_ssize_t start, Py_ssize_t len, int64_t owner)
{
    if (grow((void **)&w->v, &w->room, w->n + 1, sizeof(Word)) < 0) return -1;
    Word *o = &w->v[w->n++];
    o->start = start;
    o->len = (int32_t)len;
    o->owner = owner;
    return 0;
}

/* A word (or a run of letters of a mixed one) of `chars` characters at low[start:start + len]: kept when
 * it has 2 to max_word characters, or is one ideograph; a run of ideographs goes with the runs. */
static int
keep_word(Splitter *s, Py_ssize_t start, Py_ssize_t len, Py_ssize_t chars, int han, int64_t owner, int mixed)
{
    if (chars == 0 || chars > s->max_word || (chars == 1 && !han)) return 0;
    WordList *to = chars >= 2 && han ? (mixed ? &s->mixed_runs : &s->runs) : (mixed ? &s->mixed : &s->words);
    return word_push(to, start, len, owner);
}

/* The word being read ends: kept whole when all its characters are letters, else split into its runs
 * of letters and marks. -1 on no memory. */
static int
end_word(Splitter *s, int64_t owner)
{
    if (!s->open) return 0;
    s->open = 0;
    if (s->alpha) {
        int han = 1;
        for (Py_ssize_t k = 0; k < s->n_chars && han; k++) han = (s->chars[k] & W_HAN) != 0;
        return keep_word(s, s->start, s->low_n - s->start, s->n_chars, han, owner, 0);
    }
    Py_ssize_t at = s->start, k = 0;
    while (k < s->n_chars) {
        if (!(s->chars[k] & W_LETTER)) {
            at += s->chars[k++] >> 8;
            continue;
        }
        Py_ssize_t from = at, first = k;
        int han = 1;
        while (k < s->n_chars && (s->chars[k] & W_LETTER)) {
            han &= (s->chars[k] & W_HAN) != 0;
            at += s->chars[k++] >> 8;
        }
        if (keep_word(s, from, at - from, k - first, han, owner, 1) < 0) return -1;
    }
    return 0;
}

static inline int
regex_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

/* Where the code block, inline code or URL starting at p[i] ends, as the pattern _NOT_PROSE matches
 * them; -1 when none starts there. */
static Py_ssize_t
not_prose_end(const unsigned char *p, Py_ssize_t i, Py_ssize_t n)
{
    Py_ssize_t j;
    if (p[i] == '`') {
        if (n - i >= 3 && p[i + 1] == '`' && p[i + 2] == '`') {
            for (j = i + 3; j + 3 <= n; j++) {
                if (p[j] == '`' && p[j + 1] == '`' && p[j + 2] == '`') return j + 3;
            }
            return n; /* a block left open ends with the text */
        }
        for (j = i + 1; j < n && p[j] != '\n'; j++) {
            if (p[j] == '`') return j + 1;
        }
        return -1;
    }
    if (n - i >= 4 && memcmp(p + i, "www.", 4) == 0) {
        j = i + 4;
    }
    else if (n - i >= 7 && memcmp(p + i, "http://", 7) == 0) {
        j = i + 7;
    }
    else if (n - i >= 8 && memcmp(p + i, "https://", 8) == 0) {
        j = i + 8;
    }
    else {
        return -1;
    }
    Py_ssize_t k = j;
    while (k < n && !regex_space(p[k])) k++;
    return k > j ? k : -1;
}

/* The code point at p[i] into *cp, and its size in bytes; 0 when p[i] starts no UTF-8 character. */
static inline int
utf8_at(const unsigned char *p, Py_ssize_t i, Py_ssize_t n, uint32_t *cp)
{
    unsigned char c = p[i];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        if (n - i < 2 || !CONT(p[i + 1])) return 0;
        *cp = ((uint32_t)(c & 0x1F) << 6) | (p[i + 1] & 0x3Fu);
        return 2;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (n - i < 3 || !CONT(p[i + 1]) || !CONT(p[i + 2]) || (c == 0xE0 && p[i + 1] < 0xA0)
            || (c == 0xED && p[i + 1] >= 0xA0))
            return 0;
        *cp = ((uint32_t)(c & 0x0F) << 12) | ((uint32_t)(p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3Fu);
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (n - i < 4 || !CONT(p[i + 1]) || !CONT(p[i + 2]) || !CONT(p[i + 3]) || (c == 0xF0 && p[i + 1] < 0x90)
            || (c == 0xF4 && p[i + 1] >= 0x90))
            return 0;
        *cp = ((uint32_t)(c & 0x07) << 18) | ((uint32_t)(p[i + 1] & 0x3F) << 12)
              | ((uint32_t)(p[i + 2] & 0x3F) << 6) | (p[i + 3] & 0x3Fu);
        return 4;
    }
    return 0;
}

#define SPLIT_NOT_UTF8 (-1)
#define SPLIT_NO_MEMORY (-2)

/* The words of one text into s: 0, or SPLIT_NOT_UTF8 or SPLIT_NO_MEMORY. */
static int
split_text(Splitter *s, const unsigned char *p, Py_ssize_t n, int64_t owner)
{
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        uint32_t cp, info;
        if (c < 0x80) {
            if (c == '`' || c == 'h' || c == 'w') {
                Py_ssize_t end = not_prose_end(p, i, n);
                if (end >= 0) {
                    if (end_word(s, owner) < 0) return SPLIT_NO_MEMORY;
                    i = end;
                    continue;
                }
            }
            cp = c;
            info = s->ascii[c];
            i++;
        }
        else {
            int size = utf8_at(p, i, n, &cp);
            if (size == 0) return SPLIT_NOT_UTF8;
            i += size;
            info = s->blocks[((size_t)s->index[cp >> 8] << 8) | (cp & 0xFF)];
        }
        uint32_t flags = info >> 24;
        if (flags & W_SEPARATOR) {
            if (end_word(s, owner) < 0) return SPLIT_NO_MEMORY;
            continue;
        }
        /* Katakana, ideographs and the rest are words apart even where no space separates them. */
        int group = (flags & W_KATAKANA) ? 1 : (flags & W_HAN) ? 2 : 0;
        if (s->open && group != s->group && end_word(s, owner) < 0) return SPLIT_NO_MEMORY;
        if (!s->open) {
            s->open = 1;
            s->group = group;
            s->alpha = 1;
            s->n_chars = 0;
            s->start = s->low_n;
        }
        int64_t lowered = (int64_t)cp + ((int32_t)(info << 8) >> 8);
        if (lowered < 0 || lowered > 0x10FFFF || IS_SURROGATE(lowered)) return SPLIT_NOT_UTF8;
        uint32_t low = (uint32_t)lowered;
        if ((s->low_n + 4 > s->low_room && grow((void **)&s->low, &s->low_room, s->low_n + 4, 1) < 0)
            || (s->n_chars >= s->chars_room
                && grow((void **)&s->chars, &s->chars_room, s->n_chars + 1, sizeof(uint16_t)) < 0))
            return SPLIT_NO_MEMORY;
        unsigned char *o = s->low + s->low_n;
        int k;
        if (low < 0x80) {
            o[0] = (unsigned char)low;
            k = 1;
        }
        else if (low < 0x800) {
            o[0] = (unsigned char)(0xC0 | (low >> 6));
            o[1] = (unsigned char)(0x80 | (low & 0x3F));
            k = 2;
        }
        else if (low < 0x10000) {
            o[0] = (unsigned char)(0xE0 | (low >> 12));
            o[1] = (unsigned char)(0x80 | ((low >> 6) & 0x3F));
            o[2] = (unsigned char)(0x80 | (low & 0x3F));
            k = 3;
        }
        else {
            o[0] = (unsigned char)(0xF0 | (low >> 18));
            o[1] = (unsigned char)(0x80 | ((low >> 12) & 0x3F));
            o[2] = (unsigned char)(0x80 | ((low >> 6) & 0x3F));
            o[3] = (unsigned char)(0x80 | (low & 0x3F));
            k = 4;
        }
        s->low_n += k;
        s->chars[s->n_chars++] = (uint16_t)(flags | ((unsigned)k << 8));
        s->alpha &= (flags & W_ALPHA) != 0;
    }
    return end_word(s, owner) < 0 ? SPLIT_NO_MEMORY : 0;
}

typedef struct {
    int32_t *slots; /* word index + 1, 0 for none */
    size_t mask;
    Py_ssize_t n;
    Word *first; /* each distinct word where first met */
    Py_ssize_t first_room;
    Py_ssize_t bytes;
} Dictionary;

static inline uint64_t
hash_bytes(const unsigned char *p, Py_ssize_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

/* The index of the word at low[start:start + len] among those met, which it joins if new; -1 on no memory. */
static Py_ssize_t
dictionary_index(Dictionary *d, const unsigned char *low, Py_ssize_t start, Py_ssize_t len)
{
    if ((size_t)(d->n + 1) * 2 > d->mask + 1) {
        size_t size = d->mask ? (d->mask + 1) * 2 : 4096;
        int32_t *slots = calloc(size, sizeof(int32_t));
        if (slots == NULL) return -1;
        for (Py_ssize_t k = 0; k < d->n; k++) {
            size_t h = (size_t)hash_bytes(low + d->first[k].start, d->first[k].len) & (size - 1);
            while (slots[h]) h = (h + 1) & (size - 1);
            slots[h] = (int32_t)(k + 1);
        }
        free(d->slots);
        d->slots = slots;
        d->mask = size - 1;
    }
    size_t h = (size_t)hash_bytes(low + start, len) & d->mask;
    while (d->slots[h]) {
        const Word *w = &d->first[d->slots[h] - 1];
        if (w->len == len && memcmp(low + w->start, low + start, (size_t)len) == 0) return d->slots[h] - 1;
        h = (h + 1) & d->mask;
    }
    if (grow((void **)&d->first, &d->first_room, d->n + 1, sizeof(Word)) < 0) return -1;
    d->first[d->n].start = start;
    d->first[d->n].len = (int32_t)len;
    d->slots[h] = (int32_t)(d->n + 1);
    d->bytes += len;
    return d->n++;
}

typedef struct {
    int32_t *indices;
    int64_t *owners;
    Py_ssize_t n, room;
} Encoded;

static int
encode_word(Dictionary *d, Encoded *e, const unsigned char *low, Py_ssize_t start, Py_ssize_t len, int64_t owner)
{
    Py_ssize_t index = dictionary_index(d, low, start, len);
    if (index < 0) return -1;
    Py_ssize_t room = e->room;
    if (grow((void **)&e->indices, &room, e->n + 1, sizeof(int32_t)) < 0
        || grow((void **)&e->owners, &e->room, e->n + 1, sizeof(int64_t)) < 0)
        return -1;
    e->indices[e->n] = (int32_t)index;
    e->owners[e->n++] = owner;
    return 0;
}

/* The kept words in split_words' order (the words all letters, then the pieces of the others, then
 * the bigrams of the runs of ideographs of each), encoded; -1 on no memory. */
static int
encode_words(Splitter *s, Dictionary *d, Encoded *e)
{
    WordList *lists[2] = {&s->words, &s->mixed};
    for (int l = 0; l < 2; l++) {
        for (Py_ssize_t k = 0; k < lists[l]->n; k++) {
            Word *w = &lists[l]->v[k];
            if (encode_word(d, e, s->low, w->start, w->len, w->owner) < 0) return -1;
        }
    }
    WordList *runs[2] = {&s->runs, &s->mixed_runs};
    for (int l = 0; l < 2; l++) {
        for (Py_ssize_t k = 0; k < runs[l]->n; k++) {
            Word *w = &runs[l]->v[k];
            for (Py_ssize_t at = w->start; at + 2 * W_HAN_BYTES <= w->start + w->len; at += W_HAN_BYTES) {
                if (encode_word(d, e, s->low, at, 2 * W_HAN_BYTES, w->owner) < 0) return -1;
            }
        }
    }
    return 0;
}

/* Each distinct (owner, word) of e once, in the order first met, with how many times it comes: its
 * owner, index and count replace e's; -1 on no memory. */
static int
count_pairs(Encoded *e, float **counts)
{
    size_t size = 16;
    while (size < (size_t)e->n * 2) size *= 2;
    int32_t *slots = calloc(size, sizeof(int32_t));
    *counts = malloc((size_t)(e->n ? e->n : 1) * sizeof(float));
    if (slots == NULL || *counts == NULL) {
        free(slots);
        return -1;
    }
    Py_ssize_t n = 0;
    for (Py_ssize_t k = 0; k < e->n; k++) {
        int64_t owner = e->owners[k];
        int32_t index = e->indices[k];
        uint64_t key = ((uint64_t)owner * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)(uint32_t)index * 0xC2B2AE3D27D4EB4Full);
        size_t h = (size_t)(key ^ (key >> 31)) & (size - 1);
        while (slots[h] && !(e->owners[slots[h] - 1] == owner && e->indices[slots[h] - 1] == index)) {
            h = (h + 1) & (size - 1);
        }
        if (slots[h]) {
            (*counts)[slots[h] - 1] += 1.0f;
            continue;
        }
        e->owners[n] = owner; /* n <= k: the pairs are written over the words already read */
        e->indices[n] = index;
        (*counts)[n] = 1.0f;
        slots[h] = (int32_t)(++n);
    }
    free(slots);
    e->n = n;
    return 0;
}

static PyObject *
textscan_words(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer offsets_view, data_view, owners_view, index_view, blocks_view;
    Py_ssize_t max_word;
    int counted;
    float *counts = NULL;
    PyObject *result = NULL;
    Splitter s;
    Dictionary d;
    Encoded e;
    memset(&s, 0, sizeof(s));
    memset(&d, 0, sizeof(d));
    memset(&e, 0, sizeof(e));

    if (!PyArg_ParseTuple(args, "y*y*y*y*y*np", &offsets_view, &data_view, &owners_view, &index_view, &blocks_view,
                          &max_word, &counted)) {
        return NULL;
    }
    Py_ssize_t n = offsets_view.len / (Py_ssize_t)sizeof(int64_t) - 1;
    Py_ssize_t n_blocks = blocks_view.len / (Py_ssize_t)(256 * sizeof(uint32_t));
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "offsets must hold at least one int64");
        goto done;
    }
    if (check_int64(&offsets_view, n + 1, "offsets") < 0 || check_int64(&owners_view, n, "owners") < 0) {
        goto done;
    }
    if (owners_view.len != n * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "owners must hold one int64 per text");
        goto done;
    }
    if (index_view.len != W_BLOCKS * (Py_ssize_t)sizeof(uint16_t) || index_view.itemsize != sizeof(uint16_t)
        || (uintptr_t)index_view.buf % _Alignof(uint16_t) != 0 || blocks_view.itemsize != sizeof(uint32_t)
        || blocks_view.len != n_blocks * 256 * (Py_ssize_t)sizeof(uint32_t)
        || (uintptr_t)blocks_view.buf % _Alignof(uint32_t) != 0) {
        PyErr_SetString(PyExc_ValueError, "index must be 4352 uint16 and blocks whole blocks of 256 uint32");
        goto done;
    }
    if (max_word < 1 || max_word > 1 << 20) {
        PyErr_SetString(PyExc_ValueError, "max_word must be between 1 and 2**20");
        goto done;
    }
    const uint16_t *index = (const uint16_t *)index_view.buf;
    for (Py_ssize_t b = 0; b < W_BLOCKS; b++) {
        if (index[b] >= n_blocks) {
            PyErr_SetString(PyExc_ValueError, "index names a block blocks lacks");
            goto done;
        }
    }
    const int64_t *offsets = (const int64_t *)offsets_view.buf, *owners = (const int64_t *)owners_view.buf;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (offsets[k] < 0 || offsets[k + 1] < offsets[k] || offsets[k + 1] > (int64_t)data_view.len) {
            PyErr_Format(PyExc_ValueError, "offsets[%zd:%zd] do not lie within data", k, k + 2);
            goto done;
        }
    }
    s.index = index;
    s.blocks = (const uint32_t *)blocks_view.buf;
    memcpy(s.ascii, s.blocks + ((size_t)index[0] << 8), sizeof(s.ascii));
    s.max_word = max_word;
    const unsigned char *data = (const unsigned char *)data_view.buf;
    int status = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t k = 0; k < n && status == 0; k++) {
        status = split_text(&s, data + offsets[k], (Py_ssize_t)(offsets[k + 1] - offsets[k]), owners[k]);
    }
    if (status == 0 && encode_words(&s, &d, &e) < 0) status = SPLIT_NO_MEMORY;
    if (status == 0 && counted && count_pairs(&e, &counts) < 0) status = SPLIT_NO_MEMORY;
    Py_END_ALLOW_THREADS
    if (status == SPLIT_NO_MEMORY || d.bytes > INT32_MAX) {
        PyErr_NoMemory();
        goto done;
    }
    if (status == SPLIT_NOT_UTF8) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    PyObject *dict_offsets = PyBytes_FromStringAndSize(NULL, (d.n + 1) * (Py_ssize_t)sizeof(int64_t));
    PyObject *dict_data = PyBytes_FromStringAndSize(NULL, d.bytes);
    PyObject *indices = PyBytes_FromStringAndSize((const char *)e.indices, e.n * (Py_ssize_t)sizeof(int32_t));
    PyObject *word_owners = PyBytes_FromStringAndSize((const char *)e.owners, e.n * (Py_ssize_t)sizeof(int64_t));
    PyObject *word_counts = counted ? PyBytes_FromStringAndSize((const char *)counts, e.n * (Py_ssize_t)sizeof(float))
                                    : (Py_INCREF(Py_None), Py_None);
    if (dict_offsets && dict_data && indices && word_owners && word_counts) {
        int64_t *o = (int64_t *)PyBytes_AS_STRING(dict_offsets);
        char *out = PyBytes_AS_STRING(dict_data);
        o[0] = 0;
        for (Py_ssize_t k = 0; k < d.n; k++) {
            memcpy(out + o[k], s.low + d.first[k].start, (size_t)d.first[k].len);
            o[k + 1] = o[k] + d.first[k].len;
        }
        result = PyTuple_Pack(5, dict_offsets, dict_data, indices, word_owners, word_counts);
    }
    Py_XDECREF(word_counts);
    Py_XDECREF(dict_offsets);
    Py_XDECREF(dict_data);
    Py_XDECREF(indices);
    Py_XDECREF(word_owners);
done:
    free(s.low);
    free(s.chars);
    free(s.words.v);
    free(s.mixed.v);
    free(s.runs.v);
    free(s.mixed_runs.v);
    free(d.slots);
    free(d.first);
    free(e.indices);
    free(e.owners);
    free(counts);
    PyBuffer_Release(&offsets_view);
    PyBuffer_Release(&data_view);
    PyBuffer_Release(&owners_view);
    PyBuffer_Release(&index_view);
    PyBuffer_Release(&blocks_view);
    return result;
}

static PyMethodDef textscan_methods[] = {
    {"scan", textscan_scan, METH_VARARGS,
     "scan(texts, start, stop, sizes, chars, words) -> number of texts holding surrogates\n\n"
     "UTF-8 size, code points and words of texts[start:stop] into int64 buffers (GIL released)."},
    {"encode", textscan_encode, METH_VARARGS,
     "encode(texts, start, stop, offsets, out) -> None\n\n"
     "UTF-8 of texts[i] into out[offsets[i]:offsets[i + 1]] for start <= i < stop (GIL released)."},
    {"words", textscan_words, METH_VARARGS,
     "words(offsets, data, owners, index, blocks, max_word, counted) -> (dictionary offsets, dictionary bytes, "
     "indices, owners, counts), or None when a text is not UTF-8\n\n"
     "The words topics counts in the texts data[offsets[i]:offsets[i + 1]], dictionary-encoded (GIL released)."},
    {"extract", textscan_extract, METH_VARARGS,
     "extract(buf, spans) -> columns, or None to read these conversations the general way\n\n"
     "Columns of the conversations at buf[spans[2k]:spans[2k + 1]] (int64 spans; GIL released)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef textscan_module = {
    PyModuleDef_HEAD_INIT, "_textscan",
    "UTF-8, character and word counts of Python strs and of envelope JSON text, computed without the GIL.", -1, textscan_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__textscan(void)
{
    return PyModule_Create(&textscan_module);
}
