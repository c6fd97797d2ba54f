# a comment
# ranks 6
0 1
0 1
2 2
3 4 extra columns

5 0 # trailing
