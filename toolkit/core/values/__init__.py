"""The value model: kinds, lattice, conversions, names, families, widening, words."""
