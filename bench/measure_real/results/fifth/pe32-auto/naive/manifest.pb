@"naive1ÆAîø<qï:áç3dvÒx9²ë…NFB
nbrc 0.3.0J3/work/main/bench/measure_real/results/fifth/pe32.elQXÅ…EæÅ