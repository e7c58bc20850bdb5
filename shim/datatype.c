/*
 * datatype.c: what the shim needs to know of a datatype, and packing.
 *
 * A type is "dense" when count elements of it occupy exactly the bytes [0, count * size) of
 * the buffer, in type-signature order: then the algorithms read and write the user's buffer
 * directly. Density is decided conservatively from the type's constructor (named types with
 * no gaps, contiguous, dup, vectors whose stride equals their block, resized types that do not
 * change the extent) plus the extents; anything else (indexed, struct, subarray, gaps, pair
 * types such as MPI_DOUBLE_INT with padding) is packed with MPI_Pack in signature order and
 * unpacked with MPI_Unpack, which writes only the bytes of the receive type map. Packing
 * works in pieces of at most min(INT_MAX, XCHG_PIECE_BYTES) bytes (at least one element), so
 * totals above 2^31 bytes work with the int interface too.
 *
 * MPI_BOTTOM (a NULL buffer) with a type of absolute addresses: MPICH's MPI_Pack refuses a
 * NULL buffer, but any message may be received as MPI_PACKED, and a message's packed form is
 * the bytes of its signature, as MPI_Pack's is. Such a buffer is packed by a message to self
 * on the library's own MPI_COMM_SELF duplicate, sent with the user's type and received as
 * MPI_PACKED, and unpacked the other way round (each message its own tag, so that threads
 * never match each other's).
 *
 * Type information is cached per process, keyed by the MPI_Datatype handle (direct-mapped,
 * one mutex; a hit makes no MPI call): xchg_type_info runs twice per intercepted collective.
 * A handle may be reused once its type is freed, so a derived type is cached only with an
 * attribute of the library's keyval on it, whose delete callback (run by MPI_Type_free)
 * evicts the entry. Named types are never freed and need no attribute; uncommitted types are
 * never cached.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "normalize.h"

#ifndef XCHG_PIECE_BYTES
#define XCHG_PIECE_BYTES ((size_t)1 << 30)
#endif

static int dense(MPI_Datatype type, int depth);

static int extents_dense(MPI_Datatype type)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    MPI_Count size;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    PMPI_Type_size_x(type, &size);
    return lb == 0 && true_lb == 0 && (MPI_Count)extent == size && (MPI_Count)true_extent == size;
}

/* Dense by construction: the old type of a one-type constructor is dense and the constructor
 * adds no gaps and no overlaps. */
static int constructor_dense(MPI_Datatype type, int combiner, int depth)
{
    int ni, na, nd, ints[4] = {0};
    MPI_Aint addrs[2] = {0};
    MPI_Datatype old;
    int result = 0, old_named, oc, oni, ona, ond;

    PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (nd != 1 || ni > 4 || na > 2)
        return 0;
    PMPI_Type_get_contents(type, ni, na, nd, ints, addrs, &old);
    PMPI_Type_get_envelope(old, &oni, &ona, &ond, &oc);
    old_named = oc == MPI_COMBINER_NAMED;
    if (dense(old, depth + 1)) {
        MPI_Aint old_lb, old_extent;
        PMPI_Type_get_extent(old, &old_lb, &old_extent);
        switch (combiner) {
        case MPI_COMBINER_DUP:
        case MPI_COMBINER_CONTIGUOUS:
            result = 1;
            break;
        case MPI_COMBINER_VECTOR: /* count, blocklength, stride */
            result = ints[0] <= 1 || ints[2] == ints[1];
            break;
        case MPI_COMBINER_HVECTOR: /* count, blocklength; stride in bytes */
            result = ints[0] <= 1 || addrs[0] == (MPI_Aint)ints[1] * old_extent;
            break;
        case MPI_COMBINER_RESIZED: /* lb, extent */
            result = addrs[0] == 0 && addrs[1] == old_extent;
            break;
        default:
            result = 0;
        }
    }
    if (!old_named)
        PMPI_Type_free(&old);
    return result;
}

static int dense(MPI_Datatype type, int depth)
{
    int ni, na, nd, combiner;
    if (depth > 16 || !extents_dense(type))
        return 0;
    PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED)
        return 1;
    return constructor_dense(type, combiner, depth);
}

/* A communicator of the library's own with MPI_ERRORS_RETURN, for probing datatypes and for
 * packing MPI_BOTTOM buffers by messages to self, without invoking any handler of the user's. */
static MPI_Comm probe_comm = MPI_COMM_NULL;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

static void probe_create(void)
{
    if (PMPI_Comm_dup(MPI_COMM_SELF, &probe_comm) == MPI_SUCCESS)
        PMPI_Comm_set_errhandler(probe_comm, MPI_ERRORS_RETURN);
}

/* ---- the cache of type information ---- */

#define TYPE_CACHE_BITS 8 /* 256 slots */

/* Readers take no lock: a slot's version is odd while a writer (under the mutex) changes it,
 * and a reader that saw it odd or changed treats the lookup as a miss (a seqlock). The slot's
 * contents are read and written as relaxed atomic words, as the C11 memory model asks of a
 * seqlock's data (plain accesses that may overlap a write are a data race, which
 * ThreadSanitizer reports); on x86-64 they are plain loads and stores. */
#define INFO_WORDS ((sizeof(xchg_type_t) + sizeof(uint64_t) - 1) / sizeof(uint64_t))
typedef struct type_slot {
    unsigned version;
    int used;
    uint64_t info[INFO_WORDS]; /* an xchg_type_t; its type is the key */
} type_slot_t;

static type_slot_t type_cache[1 << TYPE_CACHE_BITS];
static pthread_mutex_t type_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static int type_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;

/* MPICH's handles are ints and Open MPI's pointers: both convert to an integer. */
static size_t slot_of(MPI_Datatype type)
{
    uint64_t h = (uint64_t)(uintptr_t)type * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> (64 - TYPE_CACHE_BITS));
}

/* The slot's information, word by word. */
static void slot_load(const type_slot_t *slot, xchg_type_t *info)
{
    uint64_t words[INFO_WORDS];
    for (size_t w = 0; w < INFO_WORDS; w++)
        words[w] = __atomic_load_n(&slot->info[w], __ATOMIC_RELAXED);
    memcpy(info, words, sizeof *info);
}

static int cache_lookup(MPI_Datatype type, xchg_type_t *info)
{
    type_slot_t *slot = &type_cache[slot_of(type)];
    unsigned before = __atomic_load_n(&slot->version, __ATOMIC_ACQUIRE);
    xchg_type_t seen;
    int used;
    if (before & 1)
        return 0;
    used = __atomic_load_n(&slot->used, __ATOMIC_RELAXED);
    slot_load(slot, &seen);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (!used || seen.type != type || __atomic_load_n(&slot->version, __ATOMIC_RELAXED) != before)
        return 0;
    *info = seen;
    return 1;
}

/* Change a slot under the lock, its version odd meanwhile. */
static void slot_write(type_slot_t *slot, int used, const xchg_type_t *info)
{
    uint64_t words[INFO_WORDS] = {0};
    __atomic_add_fetch(&slot->version, 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&slot->used, used, __ATOMIC_RELAXED);
    if (info) {
        memcpy(words, info, sizeof *info);
        for (size_t w = 0; w < INFO_WORDS; w++)
            __atomic_store_n(&slot->info[w], words[w], __ATOMIC_RELAXED);
    }
    __atomic_add_fetch(&slot->version, 1, __ATOMIC_RELEASE);
}

static void cache_store(const xchg_type_t *info)
{
    type_slot_t *slot = &type_cache[slot_of(info->type)];
    pthread_mutex_lock(&type_cache_lock);
    slot_write(slot, 1, info);
    pthread_mutex_unlock(&type_cache_lock);
}

/* The attribute's delete callback: MPI_Type_free (or a replaced attribute) evicts the type. */
unsigned xchg_type_generation = 1;

static int cache_evict(MPI_Datatype type, int keyval, void *value, void *extra)
{
    type_slot_t *slot = &type_cache[slot_of(type)];
    xchg_type_t held;
    __atomic_add_fetch(&xchg_type_generation, 1, __ATOMIC_ACQ_REL);
    (void)keyval;
    (void)value;
    (void)extra;
    pthread_mutex_lock(&type_cache_lock);
    slot_load(slot, &held); /* writers hold the lock: no change meanwhile */
    if (slot->used && held.type == type)
        slot_write(slot, 0, NULL);
    pthread_mutex_unlock(&type_cache_lock);
    return MPI_SUCCESS;
}

static void keyval_create(void)
{
    if (PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, cache_evict, &type_keyval, NULL) !=
        MPI_SUCCESS)
        type_keyval = MPI_KEYVAL_INVALID;
}

/* Put the evicting attribute on a derived type (once: setting it again would run the delete
 * callback); 0 when that fails, and the type is then not cached. */
static int watch_free(MPI_Datatype type)
{
    void *value;
    int flag = 0;
    pthread_once(&keyval_once, keyval_create);
    if (type_keyval == MPI_KEYVAL_INVALID)
        return 0;
    if (PMPI_Type_get_attr(type, type_keyval, &value, &flag) != MPI_SUCCESS)
        return 0;
    return flag || PMPI_Type_set_attr(type, type_keyval, NULL) == MPI_SUCCESS;
}

void xchg_type_finalize(void)
{
    if (type_keyval != MPI_KEYVAL_INVALID)
        PMPI_Type_free_keyval(&type_keyval);
    type_keyval = MPI_KEYVAL_INVALID;
    pthread_mutex_lock(&type_cache_lock);
    memset(type_cache, 0, sizeof type_cache);
    pthread_mutex_unlock(&type_cache_lock);
    if (probe_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&probe_comm);
}

/* ---- type information ---- */

/* MPI has no query for "committed"; packing zero elements fails for an uncommitted type in
 * both MPICH and Open MPI, and costs next to nothing otherwise. For derived types only. */
static int committed(MPI_Datatype type)
{
    int position = 0;
    char none;
    pthread_once(&probe_once, probe_create);
    if (probe_comm == MPI_COMM_NULL)
        return 0;
    return PMPI_Pack(&none, 0, type, &none, 0, &position, probe_comm) == MPI_SUCCESS;
}

/* What a miss computes: committed-ness, sizes, extents, density. */
static int type_describe(MPI_Datatype type, int named, xchg_type_t *info)
{
    MPI_Count size;
    int rc;

    if (!named && !committed(type))
        return MPI_ERR_TYPE;
    rc = PMPI_Type_size_x(type, &size);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_Type_get_extent(type, &info->lb, &info->extent);
    if (rc != MPI_SUCCESS)
        return rc;
    info->type = type;
    info->size = (size_t)size;
    info->dense = dense(type, 0);
    return MPI_SUCCESS;
}

int xchg_type_info(MPI_Datatype type, xchg_type_t *info)
{
    int ni, na, nd, combiner, rc;

    if (cache_lookup(type, info))
        return MPI_SUCCESS;
    rc = PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = type_describe(type, combiner == MPI_COMBINER_NAMED, info);
    if (rc != MPI_SUCCESS)
        return rc;
    if (combiner == MPI_COMBINER_NAMED || watch_free(type))
        cache_store(info);
    return MPI_SUCCESS;
}

/* ---- packing ---- */

/* Elements per piece, so that a piece stays below min(INT_MAX, XCHG_PIECE_BYTES) bytes (at
 * least one element). */
static size_t piece_count(const xchg_type_t *type)
{
    size_t limit =
        (size_t)INT_MAX < (size_t)XCHG_PIECE_BYTES ? (size_t)INT_MAX : (size_t)XCHG_PIECE_BYTES;
    size_t n = type->size > 0 ? limit / type->size : limit;
    return n == 0 ? 1 : n;
}

/* buf + offset bytes as an address, also for buf = MPI_BOTTOM (NULL). */
static uintptr_t displaced(const void *buf, MPI_Aint offset)
{
    return (uintptr_t)buf + (uintptr_t)offset;
}

/* One message to self on probe_comm: (from, fromcount, fromtype) -> (to, tocount, totype). */
static int self_message(const void *from, int fromcount, MPI_Datatype fromtype, void *to,
                        int tocount, MPI_Datatype totype)
{
    static unsigned next_tag;
    int tag = (int)(__atomic_fetch_add(&next_tag, 1u, __ATOMIC_RELAXED) % 32768u);

    pthread_once(&probe_once, probe_create);
    if (probe_comm == MPI_COMM_NULL)
        return MPI_ERR_INTERN;
    return PMPI_Sendrecv(from, fromcount, fromtype, 0, tag, to, tocount, totype, 0, tag, probe_comm,
                         MPI_STATUS_IGNORE);
}

int xchg_pack(const void *buf, size_t count, const xchg_type_t *type, void *out, MPI_Comm comm)
{
    char *to = out;
    size_t step = piece_count(type);
    int rc = MPI_SUCCESS;

    if (type->dense) {
        if (!buf && count * type->size > 0)
            return MPI_ERR_BUFFER;
        xchg_copy(out, buf, count * type->size);
        return MPI_SUCCESS;
    }
    for (size_t done = 0; done < count && rc == MPI_SUCCESS; done += step) {
        size_t n = count - done < step ? count - done : step;
        const void *from = (const void *)displaced(buf, (MPI_Aint)done * type->extent);
        int position = 0;
        if (buf)
            rc = PMPI_Pack(from, (int)n, type->type, to, (int)(n * type->size), &position, comm);
        else
            rc = self_message(from, (int)n, type->type, to, (int)(n * type->size), MPI_PACKED);
        to += n * type->size;
    }
    return rc;
}

int xchg_unpack(const void *packed, size_t count, const xchg_type_t *type, void *buf, MPI_Comm comm)
{
    const char *from = packed;
    size_t step = piece_count(type);
    int rc = MPI_SUCCESS;

    if (type->dense) {
        if (!buf && count * type->size > 0)
            return MPI_ERR_BUFFER;
        xchg_copy(buf, packed, count * type->size);
        return MPI_SUCCESS;
    }
    for (size_t done = 0; done < count && rc == MPI_SUCCESS; done += step) {
        size_t n = count - done < step ? count - done : step;
        void *to = (void *)displaced(buf, (MPI_Aint)done * type->extent);
        int position = 0;
        if (buf)
            rc = PMPI_Unpack(from, (int)(n * type->size), &position, to, (int)n, type->type, comm);
        else
            rc = self_message(from, (int)(n * type->size), MPI_PACKED, to, (int)n, type->type);
        from += n * type->size;
    }
    return rc;
}
