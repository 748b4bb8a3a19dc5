/* The JSON grammar of JSON.parse, checked over raw UTF-8 bytes, reporting where the top-level
 * container's children (array elements, or object members) begin and end.
 *
 *   scan(buf, pos, state, final, stop, base) -> (pos, state, children, error)
 *
 * buf is any bytes-like object; scanning starts at pos in the given state (BEGIN for a fresh document)
 * and goes on until the top-level container closes (state END: call again in state END to check that
 * only whitespace follows), a child ends at or after byte stop, or (unless final) the bytes run out
 * inside a child: then pos is where that child (or its key) begins, so the caller can call again with
 * more bytes. base is how many containers enclose the document (for the
 * nesting limit). children is a flat list of six ints per child:
 *   key_start, key_end (-1, -1 for an array element or a top-level scalar), start, end, flags, depth
 * where flags say what orjson reads differently from JSON.parse (LONE: a surrogate escape that is not
 * half of a pair; BIG_INT: an integer literal of 19 digits or more) and depth is how many containers
 * the child opens, nested. error is None or (code, position); codes are listed in ERRORS.
 *
 * memvelope_tools/_json/elements.py holds a pure-Python twin that gives identical results, and the
 * message for each code. The nesting limit is orjson's: 1024 levels, the top-level container counting
 * as one.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { BEGIN, ARR_FIRST, ARR_VALUE, ARR_NEXT, OBJ_FIRST, OBJ_KEY, OBJ_NEXT, END };
enum {
    E_VALUE = 1,
    E_ARRAY_DELIM,
    E_COLON,
    E_KEY,
    E_UNTERMINATED,
    E_CONTROL,
    E_ESCAPE,
    E_UESCAPE,
    E_EXTRA,
    E_DEEP,
    E_OBJECT_DELIM,
};
enum { F_LONE = 1, F_BIG_INT = 2 };
enum { OK, MORE, FAIL };

#define LIMIT 1024
#define ONES 0x0101010101010101ull

typedef struct {
    int code;
    Py_ssize_t pos;
} Err;

static unsigned char WS[256];
static unsigned char PLAIN[256]; /* string bytes with no meaning: not '"', not '\\', not < 0x20 */
static signed char HEX[256];

static inline Py_ssize_t
skip_ws(const uint8_t *b, Py_ssize_t i, Py_ssize_t n)
{
    while (i < n && WS[b[i]]) {
        i++;
    }
    return i;
}

static inline int
hex4(const uint8_t *p)
{
    int a = HEX[p[0]], c = HEX[p[1]], d = HEX[p[2]], e = HEX[p[3]];
    if ((a | c | d | e) < 0) {
        return -1;
    }
    return (a << 12) | (c << 8) | (d << 4) | e;
}

static inline int
fail(Err *err, int code, Py_ssize_t pos)
{
    err->code = code;
    err->pos = pos;
    return FAIL;
}

/* The string whose opening quote is at b[i]. */
static int
scan_string(const uint8_t *b, Py_ssize_t i, Py_ssize_t n, int final, int *flags, Py_ssize_t *end, Err *err)
{
    Py_ssize_t start = i;
    i++;
    for (;;) {
        /* Eight bytes at a time while none is a quote, a backslash or below 0x20. */
        while (i + 8 <= n) {
            uint64_t v;
            memcpy(&v, b + i, 8);
            uint64_t quote = v ^ (ONES * '"'), slash = v ^ (ONES * '\\');
            uint64_t special = ((quote - ONES) & ~quote) | ((slash - ONES) & ~slash) | ((v - ONES * 0x20) & ~v);
            if (special & (ONES * 0x80)) {
                break;
            }
            i += 8;
        }
        while (i < n && PLAIN[b[i]]) {
            i++;
        }
        if (i >= n) {
            return final ? fail(err, E_UNTERMINATED, start) : MORE;
        }
        uint8_t c = b[i];
        if (c == '"') {
            *end = i + 1;
            return OK;
        }
        if (c < 0x20) {
            return fail(err, E_CONTROL, i);
        }
        if (i + 1 >= n) {
            return final ? fail(err, E_UNTERMINATED, start) : MORE;
        }
        c = b[i + 1];
        if (c != 'u') {
            if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't') {
                i += 2;
                continue;
            }
            return fail(err, E_ESCAPE, i);
        }
        if (i + 6 > n) {
            return final ? fail(err, E_UESCAPE, i) : MORE;
        }
        int u = hex4(b + i + 2);
        if (u < 0) {
            return fail(err, E_UESCAPE, i);
        }
        if (u >= 0xD800 && u < 0xDC00) {
            Py_ssize_t j = i + 6;
            if (j >= n || (b[j] == '\\' && (j + 1 >= n || (b[j + 1] == 'u' && j + 6 > n)))) {
                if (!final) {
                    return MORE;
                }
            }
            else if (b[j] == '\\' && b[j + 1] == 'u') {
                int v = hex4(b + j + 2);
                if (v >= 0xDC00 && v <= 0xDFFF) {
                    i = j + 6;
                    continue;
                }
            }
            *flags |= F_LONE;
        }
        else if (u >= 0xDC00 && u <= 0xDFFF) {
            *flags |= F_LONE;
        }
        i += 6;
    }
}

static int
scan_number(const uint8_t *b, Py_ssize_t i, Py_ssize_t n, int final, int *flags, Py_ssize_t *end, Err *err)
{
    Py_ssize_t start = i;
    if (b[i] == '-') {
        i++;
        if (i >= n) {
            return final ? fail(err, E_VALUE, start) : MORE;
        }
    }
    Py_ssize_t digits = i;
    if (b[i] == '0') {
        i++;
    }
    else if (b[i] >= '1' && b[i] <= '9') {
        while (i < n && b[i] >= '0' && b[i] <= '9') {
            i++;
        }
    }
    else {
        return fail(err, E_VALUE, start);
    }
    int integer = 1;
    Py_ssize_t int_digits = i - digits;
    if (i >= n) {
        goto at_end;
    }
    if (b[i] == '.') {
        if (i + 1 >= n) {
            if (!final) {
                return MORE;
            }
            goto done;
        }
        if (b[i + 1] >= '0' && b[i + 1] <= '9') {
            integer = 0;
            i += 2;
            while (i < n && b[i] >= '0' && b[i] <= '9') {
                i++;
            }
            if (i >= n) {
                goto at_end;
            }
        }
        else {
            goto done;
        }
    }
    if (b[i] == 'e' || b[i] == 'E') {
        Py_ssize_t k = i + 1;
        if (k < n && (b[k] == '+' || b[k] == '-')) {
            k++;
        }
        if (k >= n) {
            if (!final) {
                return MORE;
            }
            goto done;
        }
        if (b[k] >= '0' && b[k] <= '9') {
            integer = 0;
            i = k + 1;
            while (i < n && b[i] >= '0' && b[i] <= '9') {
                i++;
            }
            if (i >= n) {
                goto at_end;
            }
        }
    }
    goto done;
at_end:
    if (!final) {
        return MORE;
    }
done:
    if (integer && int_digits >= 19) {
        *flags |= F_BIG_INT;
    }
    *end = i;
    return OK;
}

static int
scan_literal(const uint8_t *b, Py_ssize_t i, Py_ssize_t n, int final, Py_ssize_t *end, Err *err)
{
    const char *word = b[i] == 't' ? "true" : b[i] == 'f' ? "false" : "null";
    Py_ssize_t len = (Py_ssize_t)strlen(word);
    for (Py_ssize_t k = 0; k < len; k++) {
        if (i + k >= n) {
            return final ? fail(err, E_VALUE, i) : MORE;
        }
        if (b[i + k] != (uint8_t)word[k]) {
            return fail(err, E_VALUE, i);
        }
    }
    *end = i + len;
    return OK;
}

static inline int
scan_scalar(const uint8_t *b, Py_ssize_t i, Py_ssize_t n, int final, int *flags, Py_ssize_t *end, Err *err)
{
    uint8_t c = b[i];
    if (c == '"') {
        return scan_string(b, i, n, final, flags, end, err);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        return scan_number(b, i, n, final, flags, end, err);
    }
    if (c == 't' || c == 'f' || c == 'n') {
        return scan_literal(b, i, n, final, end, err);
    }
    return fail(err, E_VALUE, i);
}

/* One whole value starting at b[i] (not whitespace), nested inside `base` containers. */
static int
scan_value(const uint8_t *b, Py_ssize_t i, Py_ssize_t n, int final, int base, int *flags, int *maxdepth,
           Py_ssize_t *end, Err *err)
{
    unsigned char stack[LIMIT + 2];
    int depth = 0, deepest = 0, r;
    uint8_t c;
value:
    c = b[i];
    if (c == '[' || c == '{') {
        if (base + depth + 1 > LIMIT) {
            return fail(err, E_DEEP, i);
        }
        stack[++depth] = c;
        if (depth > deepest) {
            deepest = depth;
        }
        i = skip_ws(b, i + 1, n);
        if (i >= n) {
            return final ? fail(err, c == '[' ? E_VALUE : E_KEY, i) : MORE;
        }
        if (b[i] == (c == '[' ? ']' : '}')) {
            i++;
            depth--;
            goto after;
        }
        if (c == '[') {
            goto value;
        }
        goto key;
    }
    r = scan_scalar(b, i, n, final, flags, &i, err);
    if (r != OK) {
        return r;
    }
after:
    if (depth == 0) {
        *maxdepth = deepest;
        *end = i;
        return OK;
    }
    i = skip_ws(b, i, n);
    c = stack[depth];
    if (i >= n) {
        return final ? fail(err, c == '[' ? E_ARRAY_DELIM : E_OBJECT_DELIM, i) : MORE;
    }
    if (b[i] == ',') {
        i = skip_ws(b, i + 1, n);
        if (i >= n) {
            return final ? fail(err, c == '[' ? E_VALUE : E_KEY, i) : MORE;
        }
        if (c == '[') {
            goto value;
        }
        goto key;
    }
    if (b[i] == (c == '[' ? ']' : '}')) {
        i++;
        depth--;
        goto after;
    }
    return fail(err, c == '[' ? E_ARRAY_DELIM : E_OBJECT_DELIM, i);
key:
    if (b[i] != '"') {
        return fail(err, E_KEY, i);
    }
    r = scan_string(b, i, n, final, flags, &i, err);
    if (r != OK) {
        return r;
    }
    i = skip_ws(b, i, n);
    if (i >= n) {
        return final ? fail(err, E_COLON, i) : MORE;
    }
    if (b[i] != ':') {
        return fail(err, E_COLON, i);
    }
    i = skip_ws(b, i + 1, n);
    if (i >= n) {
        return final ? fail(err, E_VALUE, i) : MORE;
    }
    goto value;
}

typedef struct {
    Py_ssize_t *items;
    Py_ssize_t len, cap;
} Children;

static int
push(Children *ch, Py_ssize_t ks, Py_ssize_t ke, Py_ssize_t s, Py_ssize_t e, int flags, int depth)
{
    if (ch->len + 6 > ch->cap) {
        Py_ssize_t cap = ch->cap ? 2 * ch->cap : 6 * 256;
        Py_ssize_t *items = realloc(ch->items, (size_t)cap * sizeof(Py_ssize_t));
        if (items == NULL) {
            return -1;
        }
        ch->items = items;
        ch->cap = cap;
    }
    Py_ssize_t *p = ch->items + ch->len;
    p[0] = ks;
    p[1] = ke;
    p[2] = s;
    p[3] = e;
    p[4] = flags;
    p[5] = depth;
    ch->len += 6;
    return 0;
}

/* The top-level loop; returns OK (stopped or done), MORE, FAIL, or -1 when out of memory. */
static int
scan_top(const uint8_t *b, Py_ssize_t n, Py_ssize_t *pos, int *state, int final, Py_ssize_t stop, int base,
         Children *ch, Err *err)
{
    Py_ssize_t i = *pos, start, end, ks, ke;
    int flags, depth, r;
    for (;;) {
        i = skip_ws(b, i, n);
        *pos = i;
        switch (*state) {
        case BEGIN:
            if (i >= n) {
                return final ? fail(err, E_VALUE, i) : MORE;
            }
            if (b[i] == '[' || b[i] == '{') {
                if (base + 1 > LIMIT) {
                    return fail(err, E_DEEP, i);
                }
                *state = b[i] == '[' ? ARR_FIRST : OBJ_FIRST;
                i++;
                continue;
            }
            flags = 0;
            depth = 0;
            r = scan_scalar(b, i, n, final, &flags, &end, err);
            if (r != OK) {
                return r;
            }
            if (push(ch, -1, -1, i, end, flags, 0) < 0) {
                return -1;
            }
            *state = END;
            i = end;
            continue;
        case ARR_FIRST:
        case ARR_VALUE:
            if (i >= n) {
                return final ? fail(err, E_VALUE, i) : MORE;
            }
            if (*state == ARR_FIRST && b[i] == ']') {
                *state = END;
                *pos = i + 1;
                return OK;
            }
            flags = depth = 0;
            r = scan_value(b, i, n, final, base + 1, &flags, &depth, &end, err);
            if (r != OK) {
                return r;
            }
            if (push(ch, -1, -1, i, end, flags, depth) < 0) {
                return -1;
            }
            *state = ARR_NEXT;
            *pos = i = end;
            if (end >= stop) {
                return OK;
            }
            continue;
        case ARR_NEXT:
        case OBJ_NEXT:
            if (i >= n) {
                return final ? fail(err, *state == ARR_NEXT ? E_ARRAY_DELIM : E_OBJECT_DELIM, i) : MORE;
            }
            if (b[i] == ',') {
                *state = *state == ARR_NEXT ? ARR_VALUE : OBJ_KEY;
                i++;
                continue;
            }
            if (b[i] == (*state == ARR_NEXT ? ']' : '}')) {
                *state = END;
                *pos = i + 1;
                return OK;
            }
            return fail(err, *state == ARR_NEXT ? E_ARRAY_DELIM : E_OBJECT_DELIM, i);
        case OBJ_FIRST:
        case OBJ_KEY:
            if (i >= n) {
                return final ? fail(err, E_KEY, i) : MORE;
            }
            if (*state == OBJ_FIRST && b[i] == '}') {
                *state = END;
                *pos = i + 1;
                return OK;
            }
            if (b[i] != '"') {
                return fail(err, E_KEY, i);
            }
            flags = depth = 0;
            ks = i;
            r = scan_string(b, i, n, final, &flags, &ke, err);
            if (r != OK) {
                return r;
            }
            i = skip_ws(b, ke, n);
            if (i >= n) {
                return final ? fail(err, E_COLON, i) : MORE;
            }
            if (b[i] != ':') {
                return fail(err, E_COLON, i);
            }
            i = skip_ws(b, i + 1, n);
            if (i >= n) {
                return final ? fail(err, E_VALUE, i) : MORE;
            }
            start = i;
            r = scan_value(b, i, n, final, base + 1, &flags, &depth, &end, err);
            if (r != OK) {
                return r;
            }
            if (push(ch, ks, ke, start, end, flags, depth) < 0) {
                return -1;
            }
            *state = OBJ_NEXT;
            *pos = i = end;
            if (end >= stop) {
                return OK;
            }
            continue;
        default: /* END */
            if (i < n) {
                return fail(err, E_EXTRA, i);
            }
            return OK;
        }
    }
}

static PyObject *
scan(PyObject *module, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t pos, stop;
    int state, final, base;
    if (!PyArg_ParseTuple(args, "y*nipni", &view, &pos, &state, &final, &stop, &base)) {
        return NULL;
    }
    if (pos < 0 || pos > view.len || state < BEGIN || state > END || base < 0 || base > LIMIT) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "scan: position, state or base out of range");
        return NULL;
    }
    Children ch = {NULL, 0, 0};
    Err err = {0, 0};
    int r;
    Py_BEGIN_ALLOW_THREADS
    r = scan_top((const uint8_t *)view.buf, view.len, &pos, &state, final, stop, base, &ch, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (r < 0) {
        free(ch.items);
        return PyErr_NoMemory();
    }
    PyObject *children = PyList_New(ch.len);
    if (children == NULL) {
        free(ch.items);
        return NULL;
    }
    for (Py_ssize_t k = 0; k < ch.len; k++) {
        PyObject *v = PyLong_FromSsize_t(ch.items[k]);
        if (v == NULL) {
            free(ch.items);
            Py_DECREF(children);
            return NULL;
        }
        PyList_SET_ITEM(children, k, v);
    }
    free(ch.items);
    if (r == FAIL) {
        return Py_BuildValue("niN(in)", pos, state, children, err.code, err.pos);
    }
    return Py_BuildValue("niNO", pos, state, children, Py_None);
}

static PyMethodDef scan_methods[] = {
    {"scan", scan, METH_VARARGS,
     "scan(buf, pos, state, final, stop, base) -> (pos, state, children, error): see the module's source."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef scan_module = {
    PyModuleDef_HEAD_INIT, "_scan", "JSON.parse's grammar over bytes, with the top-level children's bounds.", -1,
    scan_methods,
};

PyMODINIT_FUNC
PyInit__scan(void)
{
    for (int c = 0; c < 256; c++) {
        WS[c] = c == ' ' || c == '\t' || c == '\n' || c == '\r';
        PLAIN[c] = c >= 0x20 && c != '"' && c != '\\';
        HEX[c] = (signed char)(c >= '0' && c <= '9' ? c - '0'
                               : c >= 'a' && c <= 'f' ? c - 'a' + 10
                               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                      : -1);
    }
    return PyModule_Create(&scan_module);
}
