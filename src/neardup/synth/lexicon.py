"""The word lists the ops draw from: common words, junk, filler sentences, names, places, dates, footers.

Owns fixed English material for insertions and replacements; must not hold character tables (see
:mod:`neardup.synth.chars`) or draw anything. Every benchmark set was made from these lists in this
order: changing an entry changes the shared sets.
"""

from __future__ import annotations

__all__ = ["AGENCIES", "CITIES", "COMMON_WORDS", "DAYS", "FILLER_SENTENCES", "FOOTERS", "JUNK_WORDS", "MONTHS",
           "NAMES", "UPDATE_TEMPLATES"]

COMMON_WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which "
    "but have an they more one had there been has were their all would will year new people said "
    "also about after could first two time them other its into than some only market government "
    "company last over most may any week report where while those million state world official "
    "before under such between both during plan group since still however number part country"
).split()
JUNK_WORDS = (
    "FREE", "click", "casino", "crypto", "winner", "discount", "bonus", "deal", "offer",
    "subscribe", "urgent", "limited", "100%", "$$$", "!!!", "bit.ly/3xQz9", "www.best-deals.example",
    "cheap", "loans", "viagra", "BUY", "NOW", "xq7zv", "promo", "giveaway", "#ad", "SALE",
)
FILLER_SENTENCES = (
    "The details were not immediately clear.",
    "Officials declined to comment further.",
    "More information is expected later this week.",
    "The announcement came as a surprise to many observers.",
    "It was not clear how the decision would affect customers.",
    "Analysts said the move had been widely expected.",
    "A spokesperson did not respond to a request for comment.",
    "The figures will be reviewed again next month.",
)
#: Surnames and place-like names (``NAMES[:44]``), then first names (``NAMES[44:]``).
NAMES = (
    "Anderson", "Baxter", "Castillo", "Dawson", "Ellison", "Fletcher", "Garrido", "Hartley",
    "Ingram", "Jennings", "Kowalski", "Lindqvist", "Moreau", "Nakamura", "Okafor", "Petrov",
    "Quinlan", "Rasmussen", "Sorensen", "Tanaka", "Underwood", "Vasquez", "Whitfield", "Yilmaz",
    "Zimmer", "Ashford", "Brampton", "Carlow", "Dunmore", "Eastleigh", "Fairhaven", "Glenrock",
    "Harwick", "Ironbridge", "Kingsmere", "Lakeshore", "Millbrook", "Northgate", "Oakridge",
    "Pinecrest", "Redfield", "Stonebury", "Thornton", "Westbrook", "Alicia", "Bernard", "Chloe",
    "Dmitri", "Elena", "Farid", "Greta", "Hugo", "Imogen", "Jonas", "Keira", "Lucas", "Marta",
    "Nikhil", "Olga", "Pablo", "Rosa", "Stefan", "Tomas", "Valerie", "Walter", "Xavier", "Yusuf",
)
CITIES = ("LONDON", "NEW YORK", "WASHINGTON", "PARIS", "BERLIN", "TOKYO", "BRUSSELS", "MOSCOW",
          "SYDNEY", "MADRID", "ROME", "BEIJING", "GENEVA", "FRANKFURT", "CHICAGO", "DUBLIN")
AGENCIES = ("Reuters", "AP", "AFP", "Bloomberg", "PA", "dpa")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
FOOTERS = (
    "Copyright {y} {a}. All rights reserved.",
    "Share this article: Facebook | Twitter | Email | Print",
    "Click here to subscribe to our daily newsletter.",
    "Reporting by {n}; Editing by {m}",
    "This story was automatically generated from a wire feed and has not been edited.",
    "Related: More stories from {a} >>",
)
UPDATE_TEMPLATES = (
    "{name} said on {day} that the figure had since risen to {num}%.",
    "Later figures showed a further {num}% change, {name} said.",
    "In a statement on {day}, {name} said a further review would be published within {small} weeks.",
    "The total was later revised to {num} million, according to {name}.",
    "{name} added that {small} more cases had been reported since the original announcement.",
    "Shares closed {num}% higher on {day} after the latest news.",
)
