// HDF5Kit: see Package.swift for this module's role.
