/* _native.c: ctxeval's compiled kernels, loaded with ctypes by ctxeval/_native.py.
 *
 * 1. ctx_scan: one pass over TREC text (a run or qrels) into columns, for ctxeval's reader.
 * 2. ctx_hash_be64, ctx_hash_bytes: the 64-bit hashes of ids that ctxeval/_core/ids.py computes
 *    with numpy (the same values, bit for bit), in one pass instead of one per operation.
 *
 * The rule is the one of ctxeval/_io/trec.py (its module docstring). This scanner vouches only for
 * what it can read exactly: ASCII text (a byte of 0x80 or above, a NUL, a \r inside a line, a line
 * with the wrong number of fields, a value outside the plain forms below: it stops with ST_DECLINE
 * and the caller gives the file to the next tier, which reads it or names the line of the error).
 *
 *   lines end at \n (a \r before it, or at the end of the data, is dropped); blank lines and lines
 *   whose first field starts with '#' are skipped; fields are separated by runs of spaces and tabs;
 *   leading and trailing ones are ignored.
 *   run:   qid Q0 docid rank score tag    score: [+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?, finite
 *   qrels: qid iter docid grade           grade: [+-]?[0-9]+(\.0*)?, within [-2^63, 2^63)
 *
 * A score is the correctly rounded double of its decimal text, as Python's float() gives: with at
 * most 19 significant digits, a mantissa m <= 2^53 and a decimal exponent k with |k| <= 22, m and
 * 10^|k| are exact doubles and one IEEE multiplication or division rounds correctly (Clinger's fast
 * path); any other score goes to strtod (correctly rounded in glibc, musl and macOS' libc), whose
 * reading must then cover the whole field (a locale's other decimal point: declined).
 *
 * Output: doc ids in fixed-width, zero-padded slots (the bytes of a numpy 'S<w>' array; with w = 8,
 * the bytes of a big-endian uint64 array), the values, and the query ids as runs of equal ids (each
 * run's id in a zero-padded slot and its number of rows). A slot too narrow stops the scan with
 * ST_DOC_WIDE / ST_HEAD_WIDE and the width needed; the caller scans again with wider slots.
 *
 * No allocation, no global state, no Python API: the caller owns every buffer; calls on different
 * buffers run in parallel (ctypes releases the GIL). The scan loops have no bounds check per byte: they
 * stop at a line end, so the data must end with one or be followed by a NUL byte (a Python bytes
 * object always is); a piece of a mapped file that ends with its line end is read in place.
 */
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <math.h>
#if defined(__SSE2__) && defined(__x86_64__) && !defined(CTX_SCALAR)
#include <emmintrin.h>
#define CTX_SSE2 1
#endif

enum { ST_OK = 0, ST_DECLINE = 1, ST_DOC_WIDE = 2, ST_HEAD_WIDE = 3, ST_FULL = 4 };
enum { KIND_RUN = 0, KIND_QRELS = 1 };

typedef struct {
    /* in */
    const uint8_t *buf;
    int64_t len;
    int64_t kind;
    int64_t doc_width;
    int64_t head_width;
    int64_t cap;      /* rows the doc and value buffers hold */
    int64_t head_cap; /* runs the head buffers hold */
    uint8_t *docs;
    double *scores;
    int64_t *grades;
    uint8_t *heads;
    int64_t *head_rows;
    /* out */
    int64_t rows;
    int64_t n_heads;
    int64_t need_width; /* ST_DOC_WIDE / ST_HEAD_WIDE: the width of the id that did not fit */
    int64_t tag_off;    /* run: the first line's tag (offset into buf, length) */
    int64_t tag_len;
    int64_t one_tag;    /* run: every line has that tag */
    int64_t bad_at;     /* ST_DECLINE: offset of the line's start */
    int64_t max_doc;    /* the longest doc id's length */
    int64_t status;
} ctx_scan_t;

/* The layout of ctx_scan_t and the meaning of its fields: the caller checks it before any call. */
int64_t ctx_abi_version(void) { return 2; }

/* The CRC-32 of this file in 8 hex digits, given by the build (hatch_build.py): the caller does not
   use a library built from another version of the source. A staleness check (an editable install
   whose source changed since it was compiled), not a verification of what the library holds. */
#ifndef CTX_SOURCE_CRC
#define CTX_SOURCE_CRC ""
#endif
const char *ctx_source_crc(void) { return CTX_SOURCE_CRC; }

/* byte classes: 0 field byte, 1 separator (space, tab), 2 line end, 3 needs a look (NUL, \r, 0x80 and
   above); a constant, so that scans on several threads share it without a race */
static const uint8_t CLS[256] = {
    3, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
};

static const double P10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline int is_digit(uint8_t c) { return (unsigned)(c - '0') < 10u; }

/* The first byte at or after p, before end, that may end a field: one of 0x00-0x20 (the separators,
   line ends, NUL and other control bytes) or 0x80-0xFF; end if none. Eight bytes at a time where
   eight remain: (x - 0x21..) | x sets a byte's top bit for such a byte, and a borrow only ever
   carries upward from one, so the lowest set bit is a true one. */
static inline const uint8_t *field_stop(const uint8_t *p, const uint8_t *end) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
    while (end - p >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        uint64_t m = ((x - UINT64_C(0x2121212121212121)) | x) & UINT64_C(0x8080808080808080);
        if (m) return p + (__builtin_ctzll(m) >> 3);
        p += 8;
    }
#endif
    while (p < end && *p > 0x20 && *p < 0x80) p++;
    return p;
}

#ifdef CTX_SSE2
/* Bit i of *stop: byte p[i] is at most 0x20 or at least 0x80 (a signed comparison gives both);
   of *nl: a line end; of *sep: a space or a tab (i < 64). */
static inline void line_masks(const uint8_t *p, uint64_t *stop, uint64_t *nl, uint64_t *sep) {
    const __m128i lim = _mm_set1_epi8(0x21), lf = _mm_set1_epi8('\n'), sp = _mm_set1_epi8(' '),
                  tab = _mm_set1_epi8('\t');
    uint64_t a = 0, b = 0, c = 0;
    for (int k = 0; k < 4; k++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(p + 16 * k));
        a |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpgt_epi8(lim, x)) << (16 * k);
        b |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, lf)) << (16 * k);
        c |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, sp), _mm_cmpeq_epi8(x, tab)))
             << (16 * k);
    }
    *stop = a;
    *nl = b;
    *sep = c;
}
#endif

/* Whether the n bytes at a and b are equal (short ids: no call into the library). */
static inline int same(const uint8_t *a, const uint8_t *b, int64_t n) {
    for (; n >= 8; n -= 8, a += 8, b += 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y) return 0;
    }
    for (; n > 0; n--, a++, b++)
        if (*a != *b) return 0;
    return 1;
}

/* 0: *out is the score's value; 1: not a plain finite score (the next tier decides) */
static int parse_score(const uint8_t *s, const uint8_t *e, double *out) {
    const uint8_t *p = s;
    int neg = 0, any = 0, truncated = 0, nd = 0;
    uint64_t m = 0;
    int64_t k = 0;
    if (p < e && (*p == '+' || *p == '-')) {
        neg = *p == '-';
        p++;
    }
    for (; p < e && is_digit(*p); p++) {
        any = 1;
        if (m == 0 && *p == '0') continue;
        if (nd < 19) {
            m = m * 10 + (uint64_t)(*p - '0');
            nd++;
        } else {
            k++;
            truncated |= *p != '0';
        }
    }
    if (p < e && *p == '.') {
        for (p++; p < e && is_digit(*p); p++) {
            any = 1;
            if (m == 0 && *p == '0') {
                k--;
                continue;
            }
            if (nd < 19) {
                m = m * 10 + (uint64_t)(*p - '0');
                nd++;
                k--;
            } else {
                truncated |= *p != '0';
            }
        }
    }
    if (!any) return 1;
    if (p < e && (*p == 'e' || *p == 'E')) {
        int eneg = 0;
        int64_t ev = 0;
        p++;
        if (p < e && (*p == '+' || *p == '-')) {
            eneg = *p == '-';
            p++;
        }
        if (p >= e || !is_digit(*p)) return 1;
        for (; p < e && is_digit(*p); p++)
            if (ev < 1000000) ev = ev * 10 + (*p - '0');
        k += eneg ? -ev : ev;
    }
    if (p != e) return 1;
    double v;
    if (m == 0) {
        v = 0.0;
    } else if (!truncated && m <= (UINT64_C(1) << 53) && k >= -22 && k <= 22) {
        v = k < 0 ? (double)m / P10[-k] : (double)m * P10[k];
    } else {
        char small[256];
        char *endp;
        int64_t n = e - s;
        char *text = n < (int64_t)sizeof small ? small : malloc((size_t)n + 1);
        if (!text) return 1;
        memcpy(text, s, (size_t)n);
        text[n] = 0;
        v = strtod(text, &endp);
        int whole = endp == text + n; /* not so in a locale whose decimal point is not '.' */
        if (text != small) free(text);
        if (!whole) return 1;
        v = fabs(v); /* -0.0 too: strtod of "-1e-400" is -0.0, whose sign neg puts back below */
    }
    if (!isfinite(v)) return 1;
    *out = neg ? -v : v;
    return 0;
}

/* 0: *out is the grade; 1: not a plain grade within [-2^63, 2^63) (a C long, as trec_eval reads it) */
static int parse_grade(const uint8_t *s, const uint8_t *e, int64_t *out) {
    const uint8_t *p = s;
    int neg = 0;
    uint64_t acc = 0;
    if (p < e && (*p == '+' || *p == '-')) {
        neg = *p == '-';
        p++;
    }
    const uint64_t limit = UINT64_C(0x7FFFFFFFFFFFFFFF) + (uint64_t)neg; /* 2^63 - 1, or 2^63 below zero */
    if (p >= e || !is_digit(*p)) return 1;
    for (; p < e && is_digit(*p); p++) {
        if (acc > (limit - 9) / 10) {
            /* acc * 10 + d may pass the limit: check exactly */
            uint64_t d = (uint64_t)(*p - '0');
            if (acc > (limit - d) / 10) return 1;
        }
        acc = acc * 10 + (uint64_t)(*p - '0');
    }
    if (p < e && *p == '.') {
        for (p++; p < e && *p == '0'; p++) {
        }
    }
    if (p != e) return 1;
    *out = neg ? (int64_t)(UINT64_C(0) - acc) : (int64_t)acc; /* (two's complement: -2^63 included) */
    return 0;
}

int64_t ctx_scan(ctx_scan_t *s) {
    const int nfields = s->kind == KIND_RUN ? 6 : 4;
    const int value_field = s->kind == KIND_RUN ? 4 : 3;
    const uint8_t *buf = s->buf, *end = buf + s->len;
    const uint8_t *p = buf;
    const uint8_t *prev_q = NULL;
    int64_t prev_qlen = -1;
    const int64_t dw = s->doc_width, hw = s->head_width;
    s->rows = 0;
    s->n_heads = 0;
    s->one_tag = 0;
    s->tag_off = s->tag_len = 0;
    s->need_width = 0;
    s->bad_at = 0;
    s->max_doc = 0;
    s->status = ST_OK;
    /* the loops stop at a line end or at the NUL after the data: data that does not end with a line
       end must be followed by a NUL (a Python bytes object always is) */
    if (s->len > 0 && buf[s->len - 1] != '\n' && buf[s->len] != 0) {
        s->status = ST_DECLINE;
        return s->status;
    }
    while (p < end) {
        const uint8_t *line = p;
        const uint8_t *fs[6], *fe[6];
        int nf = 0;
#ifdef CTX_SSE2
        /* A line of fewer than 64 bytes whose only bytes below 0x21 are separators (and a \r before
           its line end), and no byte of 0x80 or above: its fields from three bit masks, without a
           branch per byte or per field. Any other line takes the loop below. */
        if (end - p >= 64) {
            uint64_t stop, nl, sep;
            line_masks(p, &stop, &nl, &sep);
            if (nl) {
                const int len = __builtin_ctzll(nl);
                const uint64_t in = (UINT64_C(1) << len) - 1;
                uint64_t cr = (len > 0 && p[len - 1] == '\r') ? UINT64_C(1) << (len - 1) : 0;
                if (((stop & in) & ~sep & ~cr) == 0) {
                    const uint64_t field = ~stop & in;
                    const uint64_t starts = field & ~(field << 1);
                    uint64_t st = starts, en = (stop | (UINT64_C(1) << len)) & (field << 1);
                    int k = 0;
                    for (; k < nfields && st; k++) {
                        fs[k] = p + __builtin_ctzll(st);
                        fe[k] = p + __builtin_ctzll(en);
                        st &= st - 1;
                        en &= en - 1;
                    }
                    if (k == nfields && st == 0 && *fs[0] != '#') { /* exactly the format's fields */
                        p += len + 1;
                        goto have_fields;
                    }
                    if (starts == 0) { /* a blank line */
                        p += len + 1;
                        continue;
                    }
                }
            }
        }
#endif
        for (;;) {
            while (CLS[*p] == 1) p++;
            uint8_t c = *p;
            if (CLS[c] == 0) {
                if (nf == nfields) {
                    if (*fs[0] != '#') goto decline; /* more fields than the format's */
                    while (CLS[*p] == 0) p++;        /* a comment's further words */
                    continue;
                }
                fs[nf] = p;
                for (p++;;) { /* a field ends at a byte that is not a field byte */
                    p = field_stop(p, end);
                    if (p < end && CLS[*p] == 0) {
                        p++; /* a control byte other than a tab or a line end: part of the field */
                        continue;
                    }
                    break;
                }
                fe[nf++] = p;
                continue;
            }
            if (c == '\n') {
                p++;
                break;
            }
            if (c == '\r' && (p[1] == '\n' || p + 1 == end)) {
                p += p[1] == '\n' ? 2 : 1;
                break;
            }
            if (c == 0 && p == end) break;
            goto decline; /* NUL, a \r inside a line, a byte >= 0x80 */
        }
        if (nf == 0 || *fs[0] == '#') continue; /* blank line, comment */
        if (nf != nfields) goto decline;
    have_fields: {
            const int64_t row = s->rows;
            if (row >= s->cap) {
                s->status = ST_FULL;
                return s->status;
            }
            /* the query id: a new run of equal ids when it differs from the previous row's */
            const int64_t qlen = fe[0] - fs[0];
            if (qlen != prev_qlen || !same(fs[0], prev_q, qlen)) {
                if (qlen > hw) {
                    s->need_width = qlen;
                    s->status = ST_HEAD_WIDE;
                    return s->status;
                }
                if (s->n_heads >= s->head_cap) {
                    s->status = ST_FULL;
                    return s->status;
                }
                uint8_t *slot = s->heads + s->n_heads * hw;
                memset(slot, 0, (size_t)hw);
                memcpy(slot, fs[0], (size_t)qlen);
                s->head_rows[s->n_heads++] = 0;
                prev_q = fs[0];
                prev_qlen = qlen;
            }
            s->head_rows[s->n_heads - 1]++;
            /* the doc id, zero-padded */
            const int64_t dlen = fe[2] - fs[2];
            if (dlen > dw) {
                s->need_width = dlen;
                s->status = ST_DOC_WIDE;
                return s->status;
            }
            if (dlen > s->max_doc) s->max_doc = dlen;
            uint8_t *dslot = s->docs + row * dw;
            if (dw == 8) {
                uint64_t word = 0;
                memcpy(&word, fs[2], (size_t)dlen);
                memcpy(dslot, &word, 8);
            } else {
                memcpy(dslot, fs[2], (size_t)dlen);
                memset(dslot + dlen, 0, (size_t)(dw - dlen));
            }
            if (s->kind == KIND_RUN) {
                if (parse_score(fs[value_field], fe[value_field], &s->scores[row])) goto decline;
                const int64_t tlen = fe[5] - fs[5];
                if (row == 0) {
                    s->tag_off = fs[5] - buf;
                    s->tag_len = tlen;
                    s->one_tag = 1;
                } else if (s->one_tag && (tlen != s->tag_len || !same(fs[5], buf + s->tag_off, tlen))) {
                    s->one_tag = 0;
                }
            } else if (parse_grade(fs[value_field], fe[value_field], &s->grades[row])) {
                goto decline;
            }
            s->rows = row + 1;
        }
        continue;
    decline:
        s->bad_at = line - buf;
        s->status = ST_DECLINE;
        return s->status;
    }
    return s->status;
}

/* ---------------------------------------------------------------- id hashes */

static inline uint64_t splitmix64(uint64_t z) {
    z ^= z >> 30;
    z *= UINT64_C(0xBF58476D1CE4E5B9);
    z ^= z >> 27;
    z *= UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return z;
}

/* out[i] = splitmix64 of the big-endian uint64 at in + 8 i (an id of at most 8 bytes, zero-padded:
   ctxeval._core.ids.ArrayIds' '>u8' form, whose integer order is the ids' byte order). in holds n
   such 8-byte rows: ctxeval/_native.py passes nothing but a contiguous '>u8' array. */
void ctx_hash_be64(const uint8_t *in, uint64_t *out, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint64_t v;
        memcpy(&v, in + 8 * i, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
        v = __builtin_bswap64(v);
#elif !(defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)
        v = 0;
        for (int j = 0; j < 8; j++) v = (v << 8) | in[8 * i + j];
#endif
        out[i] = splitmix64(v);
    }
}

/* out[i] = splitmix64(FNV-1a over the width bytes at in + width i, zero padding included). */
void ctx_hash_bytes(const uint8_t *in, int64_t width, uint64_t *out, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *p = in + width * i;
        uint64_t h = UINT64_C(0xCBF29CE484222325);
        for (int64_t j = 0; j < width; j++) {
            h ^= p[j];
            h *= UINT64_C(0x100000001B3);
        }
        out[i] = splitmix64(h);
    }
}
