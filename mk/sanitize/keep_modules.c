/*
 * keep_modules.c: dlclose that unloads nothing, preloaded for the sanitizer runs (mk/sanitize.mk).
 *
 * MPICH (UCX's transports) and Open MPI (its MCA components) load modules with dlopen and unload
 * them in MPI_Finalize. LeakSanitizer reports at exit, when their code is gone: a block they leaked
 * then has a stack of "<unknown module>" frames, which no suppression can name, and ThreadSanitizer
 * cannot symbolize their frames either. With the modules kept, their frames carry the module's name
 * and the suppressions (the .supp files beside this one) name the MPI libraries.
 */
int dlclose(void *handle);

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
