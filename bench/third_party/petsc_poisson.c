/*
 * petsc_poisson: a PETSc program written without nbr. The 7-point Laplacian on an N^3 DMDA
 * grid, solved by CG with Jacobi from x = 0 for b = A·1; the DMDA's ghost updates and the
 * matrix's halo exchange are PetscSF scatters, which with -sf_type neighbor run
 * MPI_Dist_graph_create_adjacent and MPI_Ineighbor_alltoallv / MPI_Neighbor_alltoallv.
 * Prints the iteration count, the residual norm and the solution's norm in full (a replay
 * that moved one wrong byte changes them), and the time of the solve.
 *
 *   mpirun -np P petsc_poisson [-n N] [-sf_type neighbor] [other PETSc options]
 */
#include <petscdmda.h>
#include <petscksp.h>

static PetscErrorCode assemble(DM da, Mat A) {
    DMDALocalInfo info;
    PetscFunctionBeginUser;
    PetscCall(DMDAGetLocalInfo(da, &info));
    for (PetscInt k = info.zs; k < info.zs + info.zm; ++k) {
        for (PetscInt j = info.ys; j < info.ys + info.ym; ++j) {
            for (PetscInt i = info.xs; i < info.xs + info.xm; ++i) {
                MatStencil row = {.k = k, .j = j, .i = i}, cols[7];
                PetscScalar values[7];
                PetscInt n = 0;
                const PetscInt offsets[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
                cols[n] = row;
                values[n++] = 6.0;
                for (int o = 0; o < 6; ++o) {
                    const PetscInt ii = i + offsets[o][0], jj = j + offsets[o][1], kk = k + offsets[o][2];
                    if (ii < 0 || jj < 0 || kk < 0 || ii >= info.mx || jj >= info.my || kk >= info.mz) continue;
                    cols[n].i = ii;
                    cols[n].j = jj;
                    cols[n].k = kk;
                    values[n++] = -1.0;
                }
                PetscCall(MatSetValuesStencil(A, 1, &row, n, cols, values, INSERT_VALUES));
            }
        }
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscFunctionReturn(0);
}

int main(int argc, char** argv) {
    DM da;
    Mat A;
    Vec x, b, r, local;
    KSP ksp;
    PetscInt n = 32, iterations = 0;
    PetscReal residual = 0, solution = 0;
    PetscLogDouble start, end;
    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &n, NULL));
    PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, n,
                           n, n, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, &da));
    PetscCall(DMSetFromOptions(da));
    PetscCall(DMSetUp(da));
    PetscCall(DMCreateMatrix(da, &A));
    PetscCall(assemble(da, A));
    PetscCall(DMCreateGlobalVector(da, &x));
    PetscCall(VecDuplicate(x, &b));
    PetscCall(VecDuplicate(x, &r));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(A, x, b));
    PetscCall(VecSet(x, 0.0));
    /* One ghost update through the DMDA's own scatter as well. */
    PetscCall(DMGetLocalVector(da, &local));
    PetscCall(DMGlobalToLocalBegin(da, b, INSERT_VALUES, local));
    PetscCall(DMGlobalToLocalEnd(da, b, INSERT_VALUES, local));
    PetscCall(DMRestoreLocalVector(da, &local));
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 10000));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(KSPSetUp(ksp));
    PetscCall(PetscTime(&start));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(PetscTime(&end));
    PetscCall(KSPGetIterationNumber(ksp, &iterations));
    PetscCall(MatMult(A, x, r));
    PetscCall(VecAXPY(r, -1.0, b));
    PetscCall(VecNorm(r, NORM_2, &residual));
    PetscCall(VecNorm(x, NORM_2, &solution));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "petsc_poisson: %" PetscInt_FMT "^3 grid, %" PetscInt_FMT
                          " iterations, residual %.17g, |x| %.17g\n",
                          n, iterations, (double)residual, (double)solution));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "petsc_poisson: solve %.3f ms\n", (end - start) * 1e3));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&r));
    PetscCall(MatDestroy(&A));
    PetscCall(DMDestroy(&da));
    PetscCall(PetscFinalize());
    return 0;
}
