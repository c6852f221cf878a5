"""Where in the input, at which depth: one spatial map per cached layer (Grad-CAM for convolutional blocks, the
gradient-weighted attention of the pooled token for ViT blocks), weighted by the head's α(x), and checked by
deleting the cells the map ranks highest. Modules: config (params), live (backbone + head as one function), maps,
deletion, run (the explained inputs), figure. Nothing is imported here: params checks read config alone."""
