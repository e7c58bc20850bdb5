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
 * works in pieces of at most INT_MAX bytes, so totals above 2^31 bytes work with the int
 * interface too.
 */
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "normalize.h"

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

/* A communicator of the library's own with MPI_ERRORS_RETURN, for probing datatypes without
 * invoking any handler of the user's. */
static MPI_Comm probe_comm = MPI_COMM_NULL;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;

static void probe_create(void)
{
    if (PMPI_Comm_dup(MPI_COMM_SELF, &probe_comm) == MPI_SUCCESS)
        PMPI_Comm_set_errhandler(probe_comm, MPI_ERRORS_RETURN);
}

void xchg_type_finalize(void)
{
    if (probe_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&probe_comm);
}

/* MPI has no query for "committed"; packing zero elements fails for an uncommitted type in
 * both MPICH and Open MPI, and costs next to nothing otherwise. Named types are committed. */
static int committed(MPI_Datatype type)
{
    int ni, na, nd, combiner, position = 0;
    char none;
    PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED)
        return 1;
    pthread_once(&probe_once, probe_create);
    if (probe_comm == MPI_COMM_NULL)
        return 0;
    return PMPI_Pack(&none, 0, type, &none, 0, &position, probe_comm) == MPI_SUCCESS;
}

int xchg_type_info(MPI_Datatype type, xchg_type_t *info)
{
    MPI_Count size;
    int rc;

    if (!committed(type))
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

/* Elements per MPI_Pack/MPI_Unpack piece, so that a piece stays below INT_MAX bytes. */
static size_t piece_count(const xchg_type_t *type)
{
    size_t n = type->size > 0 ? (size_t)INT_MAX / type->size : (size_t)INT_MAX;
    return n > (size_t)INT_MAX ? (size_t)INT_MAX : (n == 0 ? 1 : n);
}

int xchg_pack(const void *buf, size_t count, const xchg_type_t *type, void *out, MPI_Comm comm)
{
    const char *in = buf;
    char *to = out;
    size_t step = piece_count(type);
    int rc = MPI_SUCCESS;

    if (type->dense) {
        memcpy(out, buf, count * type->size);
        return MPI_SUCCESS;
    }
    for (size_t done = 0; done < count && rc == MPI_SUCCESS; done += step) {
        size_t n = count - done < step ? count - done : step;
        int position = 0;
        rc = PMPI_Pack(in + (MPI_Aint)done * type->extent, (int)n, type->type, to,
                       (int)(n * type->size), &position, comm);
        to += n * type->size;
    }
    return rc;
}

int xchg_unpack(const void *packed, size_t count, const xchg_type_t *type, void *buf,
                MPI_Comm comm)
{
    const char *from = packed;
    char *out = buf;
    size_t step = piece_count(type);
    int rc = MPI_SUCCESS;

    if (type->dense) {
        memcpy(buf, packed, count * type->size);
        return MPI_SUCCESS;
    }
    for (size_t done = 0; done < count && rc == MPI_SUCCESS; done += step) {
        size_t n = count - done < step ? count - done : step;
        int position = 0;
        rc = PMPI_Unpack(from, (int)(n * type->size), &position,
                         out + (MPI_Aint)done * type->extent, (int)n, type->type, comm);
        from += n * type->size;
    }
    return rc;
}
