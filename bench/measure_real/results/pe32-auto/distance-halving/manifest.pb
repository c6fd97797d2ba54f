@"distance-halving*$
	placementblock 40/node 20/socket*
ranks_per_socket21ÆAîø<qï:pË”¡™q»…ý¹èB
nbrc 0.3.0J/tmp/mrA/pe32.elQ®A:1=Î