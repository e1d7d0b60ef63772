# server: fragment included by the top-level Makefile.am
