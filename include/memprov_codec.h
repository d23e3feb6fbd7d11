/*
 * memprov_codec.h - the encoder and the decoder of memprov's trace
 * records, as include/memprov_trace.h defines them: varints, the compact
 * version 2 records (ALLOC, FREE, STACK) and the framed ones, and one
 * decoder that reads a chunk of either version into the record structs
 * of memprov_trace.h.
 *
 * Header-only and allocation-free, so that every side uses the same code:
 * libmemprov.so's writer (interpose/trace_writer.c) and its own reader
 * (interpose/trace_iter.c), the analyzer (analyzer/trace_reader.c) and
 * the test helper that writes traces (tests/helper/tracegen.c). Nothing
 * here reads memory past the bounds it is given, whatever the bytes.
 */
#ifndef MEMPROV_CODEC_H
#define MEMPROV_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "memprov_trace.h"

/* The longest encoded ALLOC or FREE record (the writer's room check). */
#define MP_ENC_COMPACT_MAX 48
/* The longest encoded record of any type. */
#define MP_ENC_MAX (MP_MAX_RECORD + 32)

/* ---- encoding --------------------------------------------------------- */

static inline uint8_t *mp_put_uvarint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint8_t *mp_put_svarint(uint8_t *p, int64_t v)
{
	return mp_put_uvarint(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* The func and kind a tag without MP_TAG_EXT stands for. */
static inline void mp_tag_defaults(unsigned type, unsigned *func, unsigned *kind)
{
	*func = type == MP_REC_ALLOC ? MP_FN_malloc : type == MP_REC_FREE ? MP_FN_free : 0;
	*kind = type == MP_REC_ALLOC || type == MP_REC_FREE ? MP_KIND_HEAP : 0;
}

/* tag [flags func kind] ts_delta: the start of every v2 record. */
static inline uint8_t *mp_enc_head(uint8_t *p, unsigned type, unsigned flags, unsigned func,
				   unsigned kind, uint64_t ts_delta)
{
	unsigned df, dk;

	mp_tag_defaults(type, &df, &dk);
	if (flags || func != df || kind != dk) {
		*p++ = (uint8_t)(type | MP_TAG_EXT);
		*p++ = (uint8_t)flags;
		p = mp_put_uvarint(p, func);
		*p++ = (uint8_t)kind;
	} else {
		*p++ = (uint8_t)type;
	}
	return mp_put_uvarint(p, ts_delta);
}

/*
 * A framed record: h is the record in its struct's layout (h->size bytes,
 * head included; ts is not read: ts_delta is given). Returns the end.
 */
static inline uint8_t *mp_enc_framed(uint8_t *p, const struct mp_rec_head *h, uint64_t ts_delta)
{
	const uint8_t *body = (const uint8_t *)(h + 1);
	size_t len = h->size > sizeof(*h) ? h->size - sizeof(*h) : 0;

	p = mp_enc_head(p, h->type, h->flags, h->func, h->kind, ts_delta);
	p = mp_put_uvarint(p, len);
	memcpy(p, body, len);
	return p + len;
}

/*
 * A STACK record's body after its head (v2). ip: n native frames, py:
 * npy Python frames. At most 16 + 10 * n + 10 * npy bytes.
 */
static inline uint8_t *mp_enc_stack_body(uint8_t *p, uint64_t id, const uint64_t *ip, unsigned n,
					 const struct mp_pyframe *py, unsigned npy)
{
	uint64_t prev = 0;
	unsigned i;

	p = mp_put_uvarint(p, id);
	p = mp_put_uvarint(p, n);
	p = mp_put_uvarint(p, npy);
	for (i = 0; i < n; i++) {
		p = mp_put_svarint(p, (int64_t)(ip[i] - prev));
		prev = ip[i];
	}
	for (i = 0; i < npy; i++) {
		p = mp_put_uvarint(p, py[i].code_id);
		p = mp_put_uvarint(p, py[i].line);
	}
	return p;
}

/* ---- decoding --------------------------------------------------------- */

/*
 * A decoder over one chunk's used bytes. Start it with mp_dec_init, then
 * call mp_dec_next until it returns MP_DEC_END or an error.
 */
struct mp_dec {
	const uint8_t *p, *end;  /* next byte; end of the chunk's used bytes */
	const uint8_t *rec;      /* where the record mp_dec_next looked at starts */
	uint64_t ts, addr;       /* v2: the previous record's ts and address */
	uint32_t version;        /* 1 or 2 */
	uint32_t need;           /* MP_DEC_ROOM: bytes the record needs */
};

enum mp_dec_status {
	MP_DEC_OK = 0,    /* *rec is the next record */
	MP_DEC_END = 1,   /* no byte left */
	MP_DEC_SHORT = 2, /* the record runs past the end (a cut, or damage) */
	MP_DEC_BAD = 3,   /* not a record: *why says what is wrong */
	MP_DEC_ROOM = 4,  /* buf is too small: d->need bytes; nothing consumed */
};

/* data: the chunk's bytes after its head (8-byte aligned for v1). */
static inline void mp_dec_init(struct mp_dec *d, uint32_t version, const void *data, size_t used,
			       uint64_t first_ts)
{
	d->p = (const uint8_t *)data;
	d->end = d->p + used;
	d->rec = d->p;
	d->ts = first_ts;
	d->addr = 0;
	d->version = version;
	d->need = 0;
}

/* 0, MP_DEC_SHORT (the bytes end inside it) or MP_DEC_BAD (over 10 bytes). */
static inline int mp_get_uvarint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t x = 0;
	unsigned shift = 0;

	for (;;) {
		if (p >= end)
			return MP_DEC_SHORT;
		if (shift > 63)
			return MP_DEC_BAD;
		x |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p++ & 0x80))
			break;
		shift += 7;
	}
	*v = x;
	*pp = p;
	return 0;
}

static inline int mp_get_svarint(const uint8_t **pp, const uint8_t *end, int64_t *v)
{
	uint64_t u;
	int st = mp_get_uvarint(pp, end, &u);

	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return st;
}

/* A uvarint at p, which has 10 bytes at least: its end, or NULL when the
 * varint is longer than 10 bytes. */
static inline const uint8_t *mp_uvarint_10(const uint8_t *p, uint64_t *v)
{
	uint64_t x = *p & 0x7f;
	unsigned shift = 7;

	if (__builtin_expect(!(*p++ & 0x80), 1)) {
		*v = x;
		return p;
	}
	do {
		if (shift > 63)
			return NULL;
		x |= (uint64_t)(*p & 0x7f) << shift;
		shift += 7;
	} while (*p++ & 0x80);
	*v = x;
	return p;
}

/*
 * The common case of mp_dec_v2: an ALLOC or FREE with at least 64 bytes
 * left (its longest encoding is 53), read without a bound check per byte.
 * Returns MP_DEC_OK, MP_DEC_BAD, or -1 for "take the general path".
 */
static inline int mp_dec_compact(struct mp_dec *d, struct mp_rec_head *h, const char **why)
{
	const uint8_t *p = d->p;
	unsigned tag = *p, type = tag & MP_TAG_TYPE;
	uint64_t dts, da, size = 0, third = 0;
	struct mp_rec_alloc *a = (void *)h;

	if ((type != MP_REC_ALLOC && type != MP_REC_FREE) || (tag & ~MP_TAG_TYPE))
		return -1; /* other types, or flags/func/kind given */
	p++;
	if (!(p = mp_uvarint_10(p, &dts)) || !(p = mp_uvarint_10(p, &da)))
		goto bad;
	if (type == MP_REC_ALLOC &&
	    (!(p = mp_uvarint_10(p, &size)) || !(p = mp_uvarint_10(p, &third))))
		goto bad;
	h->type = (uint8_t)type;
	h->flags = 0;
	h->func = type == MP_REC_ALLOC ? MP_FN_malloc : MP_FN_free;
	h->kind = MP_KIND_HEAP;
	h->reserved = 0;
	h->size = type == MP_REC_ALLOC ? sizeof(struct mp_rec_alloc) : sizeof(struct mp_rec_free);
	h->ts = d->ts + dts;
	a->addr = d->addr + ((da >> 1) ^ -(da & 1));
	a->size = size;
	a->stack = third;
	d->addr = a->addr;
	d->ts = h->ts;
	d->p = p;
	return MP_DEC_OK;
bad:
	*why = "varint longer than 10 bytes";
	return MP_DEC_BAD;
}

/* Version 1: the record in place (data is 8-byte aligned). */
static inline int mp_dec_v1(struct mp_dec *d, const struct mp_rec_head **rec, const char **why)
{
	size_t left = (size_t)(d->end - d->p);
	const struct mp_rec_head *h = (const void *)d->p;

	if (left < sizeof(*h)) {
		*why = "record head past the used bytes";
		return MP_DEC_SHORT;
	}
	if (h->size > left) {
		*why = "record size past the used bytes";
		return MP_DEC_SHORT;
	}
	if (h->size < sizeof(*h) || h->size % 8) {
		*why = "record size not a multiple of 8 or under 16";
		return MP_DEC_BAD;
	}
	if (h->type == MP_REC_INVALID) {
		*why = "record type 0";
		return MP_DEC_BAD;
	}
	d->p += h->size;
	*rec = h;
	return MP_DEC_OK;
}

/* A v2 STACK body into s (room bytes). */
static inline int mp_dec_stack(const uint8_t **pp, const uint8_t *end, struct mp_rec_stack *s,
			       size_t room, uint32_t *need, const char **why)
{
	uint64_t id, n, npy, prev = 0, code, line;
	struct mp_pyframe *py;
	size_t size;
	unsigned i;
	int st;

	if ((st = mp_get_uvarint(pp, end, &id)) || (st = mp_get_uvarint(pp, end, &n)) ||
	    (st = mp_get_uvarint(pp, end, &npy)))
		return st;
	if (n > MP_MAX_FRAMES || npy > MP_MAX_PYFRAMES) {
		*why = "too many frames in stack";
		return MP_DEC_BAD;
	}
	size = sizeof(*s) + 8 * (size_t)n + 8 * (size_t)npy;
	if (size > room) {
		*need = (uint32_t)size;
		return MP_DEC_ROOM;
	}
	s->h.size = (uint16_t)size;
	s->id = id;
	s->n_native = (uint16_t)n;
	s->n_python = (uint16_t)npy;
	s->reserved = 0;
	for (i = 0; i < n; i++) {
		int64_t dv;

		if ((st = mp_get_svarint(pp, end, &dv)))
			return st;
		prev += (uint64_t)dv;
		s->native[i] = prev;
	}
	py = (struct mp_pyframe *)(s->native + n);
	for (i = 0; i < npy; i++) {
		if ((st = mp_get_uvarint(pp, end, &code)) || (st = mp_get_uvarint(pp, end, &line)))
			return st;
		py[i].code_id = (uint32_t)code;
		py[i].line = (uint32_t)line;
	}
	return 0;
}

/* A framed body into h (room bytes); unknown types get their head only. */
static inline int mp_dec_framed(const uint8_t **pp, const uint8_t *end, struct mp_rec_head *h,
				size_t room, uint32_t *need, const char **why)
{
	uint64_t len;
	size_t size;
	int st;

	if ((st = mp_get_uvarint(pp, end, &len)))
		return st;
	if (len > MP_MAX_RECORD - sizeof(*h)) {
		*why = "record longer than MP_MAX_RECORD";
		return MP_DEC_BAD;
	}
	if (len > (size_t)(end - *pp))
		return MP_DEC_SHORT;
	size = MP_REC_ALIGN(sizeof(*h) + (size_t)len);
	h->size = (uint16_t)size;
	if (h->type < MP_REC_TYPE_COUNT) {
		if (size > room) {
			*need = (uint32_t)size;
			return MP_DEC_ROOM;
		}
		memcpy(h + 1, *pp, (size_t)len);
		memset((uint8_t *)(h + 1) + len, 0, size - sizeof(*h) - (size_t)len);
	}
	*pp += len;
	return 0;
}

/* Version 2: decoded into buf (room bytes, 8-byte aligned, at least 64). */
static inline int mp_dec_v2(struct mp_dec *d, struct mp_rec_head *h, size_t room, const char **why)
{
	const uint8_t *p = d->p, *end = d->end;
	uint64_t dts, u, size, stack;
	unsigned tag, func, kind, flags = 0;
	int64_t da;
	int st;

	if (p >= end)
		return MP_DEC_END;
	if (__builtin_expect(end - p >= 64, 1) && (st = mp_dec_compact(d, h, why)) >= 0)
		return st;
	tag = *p++;
	if (tag & MP_TAG_RESERVED) {
		*why = "record tag with its reserved bit set";
		return MP_DEC_BAD;
	}
	if (!(tag & MP_TAG_TYPE)) {
		*why = "record type 0";
		return MP_DEC_BAD;
	}
	mp_tag_defaults(tag & MP_TAG_TYPE, &func, &kind);
	if (tag & MP_TAG_EXT) {
		if (p >= end)
			return MP_DEC_SHORT;
		flags = *p++;
		if ((st = mp_get_uvarint(&p, end, &u)))
			return st;
		if (u > 0xffff) {
			*why = "record function number out of range";
			return MP_DEC_BAD;
		}
		func = (unsigned)u;
		if (p >= end)
			return MP_DEC_SHORT;
		kind = *p++;
	}
	if ((st = mp_get_uvarint(&p, end, &dts)))
		return st;
	h->reserved = 0;
	h->type = (uint8_t)(tag & MP_TAG_TYPE);
	h->flags = (uint8_t)flags;
	h->func = (uint16_t)func;
	h->kind = (uint8_t)kind;
	h->ts = d->ts + dts;
	switch (h->type) {
	case MP_REC_ALLOC: {
		struct mp_rec_alloc *a = (void *)h;

		if ((st = mp_get_svarint(&p, end, &da)) || (st = mp_get_uvarint(&p, end, &size)) ||
		    (st = mp_get_uvarint(&p, end, &stack)))
			return st;
		h->size = sizeof(*a);
		a->addr = d->addr + (uint64_t)da;
		a->size = size;
		a->stack = stack;
		d->addr = a->addr;
		break;
	}
	case MP_REC_FREE: {
		struct mp_rec_unmap *f = (void *)h;

		if ((st = mp_get_svarint(&p, end, &da)))
			return st;
		h->size = sizeof(struct mp_rec_free);
		f->addr = d->addr + (uint64_t)da;
		if (func == MP_FN_munmap) {
			if ((st = mp_get_uvarint(&p, end, &size)))
				return st;
			h->size = sizeof(*f);
			f->len = size;
		}
		d->addr = f->addr;
		break;
	}
	case MP_REC_STACK:
		st = mp_dec_stack(&p, end, (void *)h, room, &d->need, why);
		if (st)
			return st;
		break;
	default:
		st = mp_dec_framed(&p, end, h, room, &d->need, why);
		if (st)
			return st;
	}
	d->ts = h->ts;
	d->p = p;
	return MP_DEC_OK;
}

/*
 * The next record of the chunk: *rec points into the chunk's bytes (v1)
 * or into buf (v2: room bytes, 8-byte aligned, at least 64; MP_MAX_RECORD
 * holds any record). On MP_DEC_SHORT and MP_DEC_BAD, d->rec is where the
 * record starts and *why says what is wrong (for MP_DEC_SHORT, when the
 * chunk was not cut). A record of a type this header does not know is
 * returned with its head alone (h->size is its decoded length): skip it.
 * The checks here are those of the encoding; what a record's fields must
 * hold is for the caller to check.
 */
static inline int mp_dec_next(struct mp_dec *d, const struct mp_rec_head **rec, void *buf,
			      size_t room, const char **why)
{
	int st;

	d->rec = d->p;
	*why = NULL;
	if (d->p >= d->end)
		return MP_DEC_END;
	if (d->version == 1)
		return mp_dec_v1(d, rec, why);
	st = mp_dec_v2(d, (struct mp_rec_head *)buf, room, why);
	if (st == MP_DEC_OK)
		*rec = (const struct mp_rec_head *)buf;
	else if (st == MP_DEC_SHORT && !*why)
		*why = "record runs past the used bytes";
	else if (st == MP_DEC_BAD && !*why)
		*why = "varint longer than 10 bytes";
	return st;
}

#endif /* MEMPROV_CODEC_H */
