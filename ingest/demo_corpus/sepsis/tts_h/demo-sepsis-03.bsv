45 years old | 0
male | 0
scraped right shin on a garden fence | -48
redness and swelling around the wound | -24
afebrile | 0
heart rate 94/min | 0
erythema 8 x 6 cm with indistinct margins | 0
white cell count 13.2 x 10^9/L | 0
C-reactive protein 96 mg/L | 0
creatine kinase normal | 0
admitted with cellulitis | 0
intravenous flucloxacillin started | 1
severe pain out of proportion to skin findings | 10
dusky discoloration at the centre of the erythema | 20
temperature 39.4 C | 20
sodium 131 mmol/L | 20
ultrasound showed fluid along the deep fascia | 24
taken to theatre | 30
extensive fascial necrosis debrided | 30
tissue grew Streptococcus pyogenes | 48
second debridement | 44
third debridement | 54
above-knee amputation | 60
transferred to rehabilitation | 504\
