"""dolfinx_poisson: a DOLFINx program written without nbr (DOLFINx 0.5, Debian 12).

-Δu = f on the unit cube, u = 0 on its boundary, P1 elements on an N^3 tetrahedral mesh,
solved by CG with Jacobi through PETSc. DOLFINx distributes the mesh and builds its index
maps with neighborhood collectives on dist-graph communicators, its vector scatters (the
ghost updates of assembly) run MPI_Ineighbor_alltoallv, and PETSc's, in the solve, run them
too with the global option -sf_type neighbor, set here. Prints the iteration count and the norms
of the solution and of the residual in full, and the time of the solve.

    mpirun -np P python3 dolfinx_poisson.py [N]
"""

import sys
import time

import numpy as np
import ufl
from dolfinx import fem, mesh
from dolfinx.fem.petsc import LinearProblem
from mpi4py import MPI
from petsc4py import PETSc


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    PETSc.Options().setValue("sf_type", "neighbor")
    domain = mesh.create_unit_cube(MPI.COMM_WORLD, n, n, n)
    space = fem.FunctionSpace(domain, ("Lagrange", 1))
    facets = mesh.locate_entities_boundary(domain, 2, lambda x: np.full(x.shape[1], True))
    dofs = fem.locate_dofs_topological(space, 2, facets)
    zero = fem.dirichletbc(0.0, dofs, space)
    u, v = ufl.TrialFunction(space), ufl.TestFunction(space)
    x = ufl.SpatialCoordinate(domain)
    f = 10 * ufl.sin(np.pi * x[0]) * x[1] * (1 - x[2])
    a = ufl.inner(ufl.grad(u), ufl.grad(v)) * ufl.dx
    rhs = f * v * ufl.dx
    options = {"ksp_type": "cg", "pc_type": "jacobi", "ksp_rtol": 1e-12}
    problem = LinearProblem(a, rhs, bcs=[zero], petsc_options=options)
    start = time.perf_counter()
    solution = problem.solve()
    elapsed = time.perf_counter() - start
    iterations = problem.solver.getIterationNumber()
    r = problem.b.copy()
    problem.A.mult(solution.vector, r)
    r.axpy(-1.0, problem.b)
    norm_u = solution.vector.norm()
    norm_r = r.norm()
    if MPI.COMM_WORLD.rank == 0:
        print(f"dolfinx_poisson: {n}^3 cells x 6, {iterations} iterations, |u| {norm_u!r}, residual {norm_r!r}")
        print(f"dolfinx_poisson: solve {elapsed * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
