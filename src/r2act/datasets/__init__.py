"""Dataset publication: build, card, folds, Croissant metadata, validation and load().

Reads audit output; never imports the cluster package."""
