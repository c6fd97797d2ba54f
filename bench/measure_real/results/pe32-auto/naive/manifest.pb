@"naive1ÆAîø<qï:áç3dvÒx9²ë…NFB
nbrc 0.3.0J/work/mr/a/pe32.elQXÅ…EæÅ