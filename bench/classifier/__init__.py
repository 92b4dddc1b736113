"""The labelled extraction corpus and the scripts that train and measure the classifier."""
