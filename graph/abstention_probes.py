"""Text about nothing a project's memory holds: what an off-topic question scores in a store.

graph/abstention.py searches each of these in a project's vectors; the threshold sits a
margin above what they score there. Everyday sentences on many subjects, written for this
and kept apart from the off-topic questions the abstention is measured with
(tests/fixtures/retrieval/offtopic): fitting and measuring on the same text would only
show the fit.
"""

from __future__ import annotations

__all__ = ["PROBES"]

PROBES: tuple[str, ...] = (
    "The museum opens at ten and closes early on public holidays.",
    "My sister is learning to knit a scarf for the winter.",
    "Add two cups of rice to boiling salted water and cover the pot.",
    "The hotel room had a balcony facing the harbour.",
    "Our team lost the final on penalties after extra time.",
    "The moon takes about a month to circle the earth.",
    "She signed the lease for a flat near the station.",
    "Plant the seedlings once the last frost has passed.",
    "The orchestra played a symphony by Sibelius last night.",
    "He renewed his passport two weeks before the trip.",
    "Whales migrate thousands of kilometres each year to breed.",
    "The bakery sells out of croissants before nine.",
    "Interest rates went up by a quarter of a point this month.",
    "The kids built a sandcastle with a moat around it.",
    "A good night's sleep helps memory and mood.",
    "The painting shows a farmhouse in a snowy valley.",
    "The bus to the coast leaves every half hour in summer.",
    "Remember to water the ferns while I am away.",
    "The novel follows three generations of a fishing family.",
    "Vitamin D is made in the skin when it is exposed to sunlight.",
    "The wedding reception was held in an old barn.",
    "We hiked to the lake and had lunch by the water.",
    "The mechanic replaced the brake pads and the front discs.",
    "The treaty ended a war that had lasted thirty years.",
    "Volcanoes form where one tectonic plate slides under another.",
    "The recipe calls for fresh ginger, garlic and coriander.",
    "I booked a table for four at the Italian place on Friday.",
    "The puppy chewed through the leg of the kitchen chair.",
    "Photosynthesis turns sunlight, water and carbon dioxide into sugar.",
    "Prices at the farmers market are higher than at the supermarket.",
    "The choir rehearses every Thursday evening in the church hall.",
    "The city council voted to extend the cycle lanes.",
    "Knights in the middle ages trained from childhood.",
    "The marathon route passes the cathedral and the old bridge.",
    "Grandma's garden is full of roses and lavender.",
    "A triangle's angles always add up to one hundred and eighty degrees.",
    "The ferry was cancelled because of the storm.",
    "He practises the violin for an hour every morning.",
    "The dentist said I should floss more often.",
    "The film won three awards at the festival.",
    "Stock markets fell sharply after the announcement.",
    "The children learned about dinosaurs at school today.",
    "Saffron is the most expensive spice by weight.",
    "We repainted the living room a pale shade of green.",
    "The river flooded the fields after a week of rain.",
    "The poem compares love to a red rose.",
    "Bread rises because yeast produces carbon dioxide.",
    "The ski resort opens as soon as there is enough snow.",
    "My neighbour's cat sleeps on our porch every afternoon.",
    "The election results will be announced tomorrow morning.",
    "Olive trees can live for more than a thousand years.",
    "The library extended its opening hours during exams.",
    "Coffee beans are the seeds of a cherry-like fruit.",
    "The football season starts again in August.",
    "The spreadsheet lists our monthly household expenses.",
    "A rainbow appears when sunlight is refracted by raindrops.",
    "The castle was rebuilt after a fire in the sixteenth century.",
    "She ran her first half marathon in under two hours.",
    "The landlord fixed the heating after a week of complaints.",
    "Tea was first drunk in China thousands of years ago.",
    "The tomatoes ripened late this year because of the cold spring.",
    "Please bring a dish to share at the picnic on Sunday.",
    "The astronaut spent six months on the space station.",
    "The jazz club downtown has live music every night.",
)
