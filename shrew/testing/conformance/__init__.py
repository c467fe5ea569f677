"""The backend conformance suite: checks a device against the CPU backend in float64.

    pytest --pyargs shrew.testing.conformance --shrew-device NAME

The operations are described once, in cases.CASES; every test is generated from it.
"""
