"""``python -m shrew.backends.opencl``: every OpenCL device found, and whether it works."""
from . import describe

found = describe()
for info in found:
    print(info.line())
if not found:
    print("no OpenCL device found")
