@"naive1ÆAîø<qï:áç3dvÒx9²ë…NFB
nbrc 0.3.0J/tmp/mrA/pe32.elQXÅ…EæÅ