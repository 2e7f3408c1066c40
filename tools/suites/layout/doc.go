// Package layout tests that the edge's code reads in the order a request
// meets it (the doc of package edge, "Reading order"): each stage of a
// visitor's request is one file, a stage calls no function of a stage
// before it, every file of the package is named in that order, and the
// folder stays small enough to read.
package layout
