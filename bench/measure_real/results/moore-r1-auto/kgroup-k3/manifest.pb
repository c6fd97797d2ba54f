€"kgroup*
k3*
	threshold3*
topology_aware0*
max_hyperedges256*
max_combinations1000001;Nì¢?:€LfV	&Í‘úr©öÛ‰90OÊ8W±#Ï•¡vBhÓJ `-*}æV<ns›E?ÓñxÚU%æí‰È£Éø{«9J28eo¨M5-m«N¼e¹'¾«|´ :š–QĞËÔÖYsi~³¢ÿĞG©èê÷"Û-Ì‰†Eµg/4B
nbrc 0.3.0J/tmp/mrA/moore-r1.elQ™wïHT$öe