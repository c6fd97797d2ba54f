€"hierarchical*$
	placementblock 40/node 20/socket*
ranks_per_node16*
aggregate_bynode*

intra_nodebruck*

radix4*
across_nodeslanes1;Nì¢?:€Lr?^©‰È´
 ñ9×r"m®³»†n.¨›A[¸ÈË£‰À)v­Ó(lXQímK¸‡Æ‡Fš#ƒÔ³ÆìOÿæA˜üùÒ²úRsÜ '°œJ6“›¾à™H¬J;7B¢¹Ä÷ë¬ùä0¥9>zûFÔÕB
nbrc 0.3.0J/tmp/mrA/moore-r1.elQr¼ÆTƒÒ